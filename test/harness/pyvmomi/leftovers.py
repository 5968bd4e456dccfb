#!/usr/bin/python3
"""Independent leftover listing for integration tests (Debian python3-pyvmomi).

stdin: {"url", "username", "password", "certFile", "prefix": "ss-"}
stdout: {"datastores": [names starting with prefix],
         "disks": [{"vm": name, "fileName": "[ds] ss-….vmdk"}]  (attached disks whose file name contains prefix),
         "files": ["[ds] path"]  (.vmdk files on any datastore whose name contains prefix)}
Only reads; it never changes the inventory.
"""
import json
import ssl
import sys
from urllib.parse import urlparse

from pyVim.connect import SmartConnect, Disconnect
from pyVim.task import WaitForTask
from pyVmomi import vim


def objects(content, vimtype):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        return list(view.view)
    finally:
        view.Destroy()


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
    u = urlparse(req["url"])
    ctx = ssl.create_default_context(cafile=req["certFile"])
    ctx.check_hostname = False
    si = SmartConnect(host=u.hostname, port=u.port or 443, user=req["username"], pwd=req["password"], sslContext=ctx)
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
