#!/usr/bin/env bash
# `npm run demo`: everything on a fresh Debian machine. Installs missing system packages (when
# root), npm dependencies, starts the embedded lab (sshd guest + vCenter simulator), runs the
# quickstart sweep and the VMFS6 block-size study (64 KB vs 1 MB, VMFS5 vs VMFS6) against it — the lab
# acts as ESXi/vCenter 8.0 — and prints where the reports are. (The classic VMFS3 study needs ESXi 5.x:
# `npm run lab -- down && npm run lab -- up --version 5.5`, then playbooks/vmfs-block-size.yaml.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-packages.sh demo
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci; fi
npm run --silent lab -- up --version 8.0
echo
echo "== quickstart: CrystalDiskMark 8 default tests on the lab guest over SSH =="
quick=$(node bin/storsweep.mjs run playbooks/quickstart.yaml -i .lab/inventory.yaml --json | tail -n 1)
quick_dir=$(node -e 'console.log(JSON.parse(process.argv[1]).runDir)' "$quick")
if [ -f playbooks/vmfs6-block-size.yaml ] && grep -q lab-vcenter .lab/inventory.yaml; then
  echo
  echo "== vmfs6-block-size: VMFS6 64 KB vs 1 MB, VMFS5 vs VMFS6 at 1 MB, on the vCenter simulator (8.0) =="
  device=$(node -e 'const y=require("yaml");const inv=y.parse(require("fs").readFileSync(".lab/inventory.yaml","utf8"));console.log(inv.targets["lab-vcenter"].vmfsDevice)')
  vmfs=$(node bin/storsweep.mjs run playbooks/vmfs6-block-size.yaml -i .lab/inventory.yaml --confirm-destroy "$device" --json | tail -n 1)
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
