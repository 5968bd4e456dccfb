#!/usr/bin/env bash
# `npm run demo`: everything on a fresh Debian machine. Installs missing system packages (when
# root), npm dependencies, starts the embedded lab (sshd guest + vCenter simulator), runs the
# quickstart sweep and the VMFS block-size study against it, and prints where the reports are.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS="golang-go golang-github-vmware-govmomi-dev openssh-server openssh-client fio python3"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "demo: installing$missing"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "demo: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
    exit 1
  fi
fi
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci; fi
npm run --silent lab -- up
echo
echo "== quickstart: CrystalDiskMark 8 default tests on the lab guest over SSH =="
quick=$(node bin/storsweep.mjs run playbooks/quickstart.yaml -i .lab/inventory.yaml --json | tail -n 1)
quick_dir=$(node -e 'console.log(JSON.parse(process.argv[1]).runDir)' "$quick")
if [ -f playbooks/vmfs-block-size.yaml ] && grep -q lab-vcenter .lab/inventory.yaml; then
  echo
  echo "== vmfs-block-size: VMFS3 1/2/4/8 MB datastores on the vCenter simulator =="
  device=$(node -e 'const y=require("yaml");const inv=y.parse(require("fs").readFileSync(".lab/inventory.yaml","utf8"));console.log(inv.targets["lab-vcenter"].vmfsDevice)')
  vmfs=$(node bin/storsweep.mjs run playbooks/vmfs-block-size.yaml -i .lab/inventory.yaml --confirm-destroy "$device" --json | tail -n 1)
  vmfs_dir=$(node -e 'console.log(JSON.parse(process.argv[1]).runDir)' "$vmfs")
fi
echo
echo "reports:"
echo "  $quick_dir/report.md"
echo "  $quick_dir/report.html"
if [ -n "${vmfs_dir:-}" ]; then
  echo "  $vmfs_dir/report.md"
  echo "  $vmfs_dir/report.html"
fi
