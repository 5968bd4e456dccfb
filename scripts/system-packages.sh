#!/usr/bin/env bash
# The Debian packages storsweep's demo and tests need, in one place: `npm run demo`
# (scripts/demo.sh), `npm test` (package.json) and CI (.ci/run) all call this script first.
#
#   bash scripts/system-packages.sh demo|test
#
# Every package of the set that dpkg does not report installed ("<want> ok installed", held
# ones too) is missing. As root (with apt-get)
# the missing ones are installed; otherwise the script stops at once (exit 1) with the list and
# the command that installs them, before anything else runs — not a test suite that fails test
# by test because pyvmomi or fio is absent. Without dpkg-query (not a Debian-like machine) it
# cannot tell: it names the set and goes on (exit 0).
set -euo pipefail

# golang-go + golang-github-vmware-govmomi-dev: VMware's vCenter simulator, built from source
# (src/lab/harness/vcsim/build.sh); openssh-server/-client: the lab's real SSH guest and test host;
# fio: the real workload tool; python3: the ESXi stand-in; util-linux: the lab guest's disks
# (losetup: the simulator's loop device per attached disk; lsblk, blkid: the guest-disk checks)
DEMO="golang-go golang-github-vmware-govmomi-dev openssh-server openssh-client fio python3 util-linux"
# python3-pyvmomi: the independent vSphere client that verifies our calls; ansible: the peer
# (community.vmware); chromium: the HTML report test; ca-certificates git make g++: `npm ci`
# (HTTPS, git, native modules built when no prebuilt binary fits); procps: kill/ps, as a Debian
# guest has them; fdisk (sfdisk): a foreign partition table written in the guest-disk tests; sudo:
# a non-root guest login's `sudo -n`; xfsprogs: guest.filesystem xfs (e2fsprogs, for ext4, is essential);
# postgresql: the PostgreSQL store's tests start a real server from /usr/lib/postgresql/*/bin
# (initdb + pg_ctl in a temp directory, as the package's `postgres` user when root: test/helpers/postgres.ts)
TEST="$DEMO python3-pyvmomi ansible chromium ca-certificates procps git make g++ fdisk sudo xfsprogs postgresql"

case "${1:-}" in
  demo) want=$DEMO; who="npm run demo" ;;
  test) want=$TEST; who="npm test" ;;
  *) echo "usage: bash scripts/system-packages.sh demo|test" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "$who: cannot check system packages here (no dpkg-query); it needs the Debian packages $want or their equivalents" >&2
  exit 0
fi

missing=""
for p in $want; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  # installed whatever the wanted state: "install ok installed", "hold ok installed" (apt-mark
  # hold), "deinstall ok installed" (selected for removal, still there) — dpkg-query(1) ${Status}
  case "$status" in
    *" ok installed") ;;
    *) missing="$missing $p" ;;
  esac
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "$who: installing missing Debian packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
  exit 0
fi

{
  echo "$who: missing Debian packages: $missing"
  echo "install them as root, then run $who again:"
  echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing"
} >&2
exit 1
