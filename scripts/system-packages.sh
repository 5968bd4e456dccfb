#!/usr/bin/env bash
# The Debian packages storsweep's demo and tests need, in one place: `npm run demo`
# (scripts/demo.sh), `npm test` (package.json) and CI (.ci/run) all call this script first.
#
#   bash scripts/system-packages.sh demo|test|lab    (who asks: named in the messages)
#   bash scripts/system-packages.sh --list            (the packages, one a line)
#
# Every package of the set that dpkg does not report installed ("<want> ok installed", held
# ones too) is missing. As root (with apt-get)
# the missing ones are installed; otherwise the script stops at once (exit 1) with the list and
# the command that installs them, before anything else runs — not a test suite that fails test
# by test because pyvmomi or fio is absent. Without dpkg-query (not a Debian-like machine) it
# cannot tell: it names the set and goes on (exit 0).
set -euo pipefail

# One list for all three (the lab, the demo and the tests need the same machine: a package only the
# tests used to ask for, sudo, stopped the demo's lab on a new machine). Every program the lab starts
# or runs in its guest is covered by it; test/unit/lab-programs.test.ts checks that against dpkg.
#
# golang-go + golang-github-vmware-govmomi-dev: VMware's vCenter simulator, built from source
# (src/lab/harness/vcsim/build.sh); openssh-server/-client: the lab's real SSH guest and test host
# (sshd, ssh-keygen); fio: the real workload tool; python3: the ESXi and Windows stand-ins;
# util-linux + mount: the lab guest's disks (losetup, partx: a loop device per attached disk; lsblk,
# blkid, wipefs: the guest-disk checks); sudo: the VMware Tools guest's `sudo -n` (the harness gives
# its guest user passwordless sudo, checked with visudo); passwd: that user's useradd/userdel;
# procps: kill/ps, as a Debian guest has them; fdisk (sfdisk) and xfsprogs (mkfs.xfs; e2fsprogs,
# for ext4, is essential): guest.filesystem; postgresql: `lab up --postgres` and the store's tests
# (initdb + pg_ctl from /usr/lib/postgresql/*/bin, as the package's `postgres` user when root);
# python3-pyvmomi: the independent vSphere client that verifies our calls; ansible: the peer
# (community.vmware); chromium: the HTML report test; ca-certificates git make g++: `npm ci`
# (HTTPS, git, native modules built when no prebuilt binary fits); zsh fish: the completion
# scripts run in the real shells (test/integration/completion-shells.test.ts).
PACKAGES="golang-go golang-github-vmware-govmomi-dev openssh-server openssh-client fio python3 util-linux mount sudo passwd procps fdisk xfsprogs e2fsprogs postgresql python3-pyvmomi ansible chromium ca-certificates git make g++ zsh fish"

want=$PACKAGES
case "${1:-}" in
  demo) who="npm run demo" ;;
  test) who="npm test" ;;
  lab) who="storsweep lab" ;;
  --list) printf '%s\n' $PACKAGES; exit 0 ;;
  *) echo "usage: bash scripts/system-packages.sh demo|test|lab|--list" >&2; exit 2 ;;
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
