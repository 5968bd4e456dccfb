#!/usr/bin/python3
"""Watches a vCenter while a sweep runs, as an independent client (Debian python3-pyvmomi).

stdin, first line: {"url", "username", "password", "certFile", "prefix": "ss-", "vm": name,
                    "intervalMs": 200, "maxSec": 600}
Prints "ready" once logged in, then polls every intervalMs and remembers the first snapshot of every
datastore whose name starts with prefix and of every disk of `vm` whose file name contains prefix.
Any further stdin line, or EOF, stops it; the last stdout line is then
  {"polls": n, "datastores": {name: {...}}, "disks": {fileName: {...}}, "order": [names/files]}
Only reads; it never changes the inventory. Logs out before it prints.
"""
import json
import select
import sys
import time

from pyVim.connect import Disconnect
from pyVmomi import vim

from session import connect


def view_of(content, vimtype):
    return content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)


def datastore_snapshot(ds):
    info = ds.info
    out = {"type": ds.summary.type, "infoType": info._wsdlName}
    if isinstance(info, vim.host.VmfsDatastoreInfo):
        out.update(blockSizeMb=info.vmfs.blockSizeMb, blockSize=info.vmfs.blockSize,
                   majorVersion=info.vmfs.majorVersion, extents=[e.diskName for e in info.vmfs.extent])
    if isinstance(info, vim.host.NasDatastoreInfo):
        out.update(remoteHost=info.nas.remoteHost, remotePath=info.nas.remotePath)
    return out


def disk_snapshot(d):
    b = d.backing
    out = {"backingType": b._wsdlName, "fileName": b.fileName, "diskMode": getattr(b, "diskMode", None),
           "capacityInKB": d.capacityInKB}
    if isinstance(b, vim.vm.device.VirtualDisk.FlatVer2BackingInfo):
        out.update(thinProvisioned=bool(b.thinProvisioned), eagerlyScrub=bool(b.eagerlyScrub))
    if isinstance(b, vim.vm.device.VirtualDisk.RawDiskMappingVer1BackingInfo):
        out.update(compatibilityMode=b.compatibilityMode, deviceName=b.deviceName, lunUuid=b.lunUuid)
    return out


def main():
    req = json.loads(sys.stdin.readline())
    prefix = req.get("prefix") or "ss-"
    interval = req.get("intervalMs", 200) / 1000.0
    deadline = time.time() + req.get("maxSec", 600)
    si = connect(req)
    res = {"polls": 0, "datastores": {}, "disks": {}, "order": [], "errors": []}
    try:
        content = si.RetrieveContent()
        ds_view = view_of(content, vim.Datastore)
        vm_view = view_of(content, vim.VirtualMachine)
        vm = [v for v in vm_view.view if v.name == req["vm"]]
        vm_view.Destroy()
        if not vm:
            raise LookupError("no VM named %r" % req["vm"])
        vm = vm[0]
        print("ready", flush=True)
        while time.time() < deadline:
            res["polls"] += 1
            try:
                for ds in ds_view.view:
                    name = ds.name
                    if name.startswith(prefix) and name not in res["datastores"]:
                        res["datastores"][name] = datastore_snapshot(ds)
                        res["order"].append(name)
                for d in vm.config.hardware.device:
                    if isinstance(d, vim.vm.device.VirtualDisk):
                        f = getattr(d.backing, "fileName", "") or ""
                        if prefix in f and f not in res["disks"]:
                            res["disks"][f] = disk_snapshot(d)
                            res["order"].append(f)
            except Exception as e:  # an object removed between listing and reading: poll again
                if len(res["errors"]) < 20:
                    res["errors"].append("%s: %s" % (type(e).__name__, getattr(e, "msg", str(e))))
            ready, _, _ = select.select([sys.stdin], [], [], interval)
            if ready:
                break
        ds_view.Destroy()
    finally:
        Disconnect(si)
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
