#!/usr/bin/python3
"""Independent leftover listing for integration tests (Debian python3-pyvmomi).

stdin: {"url", "username", "password", "certFile", "prefix": "ss-"}
stdout: {"datastores": [names starting with prefix],
         "disks": [{"vm": name, "fileName": "[ds] ss-….vmdk"}]  (attached disks whose file name contains prefix),
         "files": ["[ds] path"]  (.vmdk files on any datastore whose name contains prefix)}
Only reads; it never changes the inventory.
"""
import json
import sys

from pyVim.connect import Disconnect
from pyVim.task import WaitForTask
from pyVmomi import vim

from session import connect, objects


def files_on(ds, prefix):
    """vmdk files whose name contains prefix, via the datastore browser (detached leftovers)."""
    spec = vim.host.DatastoreBrowser.SearchSpec(matchPattern=["*.vmdk"])
    task = ds.browser.SearchDatastoreSubFolders_Task("[%s]" % ds.name, spec)
    WaitForTask(task)
    out = []
    for res in task.info.result or []:
        for f in res.file or []:
            if prefix in f.path:
                folder = res.folderPath.rstrip("/")
                out.append("%s/%s" % (folder, f.path) if not folder.endswith("]") else "%s %s" % (folder, f.path))
    return out


def main():
    req = json.load(sys.stdin)
    prefix = req.get("prefix") or "ss-"
    si = connect(req)
    try:
        content = si.RetrieveContent()
        stores = objects(content, vim.Datastore)
        res = {"datastores": sorted(d.name for d in stores if d.name.startswith(prefix)), "disks": [], "files": []}
        for vm in objects(content, vim.VirtualMachine):
            for dev in vm.config.hardware.device if vm.config else []:
                if isinstance(dev, vim.vm.device.VirtualDisk):
                    name = getattr(dev.backing, "fileName", "") or ""
                    if prefix in name:
                        res["disks"].append({"vm": vm.name, "fileName": name})
        for ds in stores:
            try:
                res["files"].extend(files_on(ds, prefix))
            except Exception as e:  # a browser the simulator lacks must not hide the rest
                res.setdefault("errors", []).append("%s: %s" % (ds.name, getattr(e, "msg", str(e))))
        res["files"].sort()
        print(json.dumps(res))
    finally:
        Disconnect(si)


if __name__ == "__main__":
    main()
