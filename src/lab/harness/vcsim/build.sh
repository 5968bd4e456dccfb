#!/usr/bin/env bash
# Builds the vcsim harness with Debian's Go toolchain and govmomi source (GOPATH mode).
# Usage: build.sh [output-path]   (default: src/lab/harness/vcsim/vcsim-harness, git-ignored)
# Skips the build when the binary is newer than every .go file here.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:-$here/vcsim-harness}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

if ! command -v go >/dev/null 2>&1; then
  echo "build.sh: 'go' not found; install the Debian package golang-go" >&2
  exit 3
fi
gopath=/usr/share/gocode
if [ ! -d "$gopath/src/github.com/vmware/govmomi/simulator" ]; then
  echo "build.sh: govmomi source not found under $gopath; install the Debian package golang-github-vmware-govmomi-dev" >&2
  exit 4
fi

if [ -x "$out" ]; then
  stale=0
  for f in "$here"/*.go; do
    if [ "$f" -nt "$out" ]; then stale=1; break; fi
  done
  if [ "$stale" = 0 ]; then
    echo "$out"
    exit 0
  fi
fi

# A writable cache outside $HOME so the build works as root on a fresh machine and in CI.
export GOCACHE="${GOCACHE:-/tmp/storsweep-gocache-$(id -u)}"
export GOPATH="$gopath" GO111MODULE=off GOFLAGS="${GOFLAGS:-}" CGO_ENABLED=0
mkdir -p "$GOCACHE" "$(dirname "$out")"
cd "$here"
tmp="$out.tmp.$$"
go build -o "$tmp" .
mv -f "$tmp" "$out"
echo "$out"
