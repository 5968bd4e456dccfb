#!/usr/bin/python3
"""Independent read-back for the vSphere client's integration tests (Debian python3-pyvmomi).

stdin: {"url", "username", "password", "certFile", "datastores": [names], "vm": name|null,
        "count": vim type name|null}
stdout: {"datastores": {name: {...}|null}, "disks": [...], "count": n}
Only reads; it never changes the inventory.
"""
import json
import sys

from pyVim.connect import Disconnect
from pyVmomi import vim

from session import connect, objects


def datastore(content, name):
    for ds in objects(content, vim.Datastore):
        if ds.name != name:
            continue
        info = ds.info
        out = {"type": ds.summary.type, "infoType": info._wsdlName, "url": info.url}
        if isinstance(info, vim.host.VmfsDatastoreInfo):
            out.update(blockSizeMb=info.vmfs.blockSizeMb, blockSize=info.vmfs.blockSize,
                       majorVersion=info.vmfs.majorVersion,
                       extents=[e.diskName for e in info.vmfs.extent])
        if isinstance(info, vim.host.NasDatastoreInfo):
            out.update(remoteHost=info.nas.remoteHost, remotePath=info.nas.remotePath)
        return out
    return None


def disks(content, name):
    for vm in objects(content, vim.VirtualMachine):
        if vm.name != name:
            continue
        out = []
        devices = vm.config.hardware.device
        by_key = {d.key: d for d in devices}
        for d in devices:
            if not isinstance(d, vim.vm.device.VirtualDisk):
                continue
            b = d.backing
            item = {"key": d.key, "controllerKey": d.controllerKey, "unitNumber": d.unitNumber,
                    "fileName": b.fileName, "backingType": b._wsdlName,
                    "capacityInKB": d.capacityInKB}
            ctl = by_key.get(d.controllerKey)
            if ctl is not None:
                item.update(controllerType=ctl._wsdlName, busNumber=getattr(ctl, "busNumber", None))
            if isinstance(b, vim.vm.device.VirtualDisk.FlatVer2BackingInfo):
                item.update(thinProvisioned=bool(b.thinProvisioned), eagerlyScrub=bool(b.eagerlyScrub), uuid=b.uuid)
            if isinstance(b, vim.vm.device.VirtualDisk.RawDiskMappingVer1BackingInfo):
                item.update(compatibilityMode=b.compatibilityMode, deviceName=b.deviceName,
                            lunUuid=b.lunUuid)
            out.append(item)
        return out
    raise LookupError("no VM named %r" % name)


def main():
    req = json.load(sys.stdin)
    si = connect(req)
    try:
        content = si.RetrieveContent()
        res = {"datastores": {n: datastore(content, n) for n in req.get("datastores") or []}}
        if req.get("vm"):
            res["disks"] = disks(content, req["vm"])
        if req.get("count"):
            res["count"] = len(objects(content, getattr(vim, req["count"])))
        print(json.dumps(res))
    finally:
        Disconnect(si)


if __name__ == "__main__":
    main()
