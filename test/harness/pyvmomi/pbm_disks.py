#!/usr/bin/python3
"""Independent SPBM read-back for integration tests (Debian python3-pyvmomi, `from pyVmomi import pbm`).

Reads {"url", "username", "password", "certFile", "vm"} on stdin; prints one JSON object:
{"disks": [{"key", "fileName", "profileIds": [...]}], "policies": {"<id>": "<name>"}}.
The PBM stub rides on the vim25 session: its cookie goes in the vcSessionCookie SOAP header
(pyVmomi's request context), on the path /pbm/sdk, as VMware's pyVmomi samples connect to SPBM.
"""
import json
import os
import sys
from urllib.parse import urlparse

from pyVim.connect import Disconnect
from pyVmomi import SoapStubAdapter, VmomiSupport, pbm, vim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session import connect, objects  # noqa: E402


def pbm_content(si, req):
    cookie = si._stub.cookie.split("=", 1)[1].split(";", 1)[0].strip('"')
    VmomiSupport.GetRequestContext()["vcSessionCookie"] = cookie
    u = urlparse(req["url"])
    stub = SoapStubAdapter(host=u.hostname, port=u.port or 443, path="/pbm/sdk", version="pbm.version.version11",
                           sslContext=si._stub.schemeArgs.get("context"))
    return pbm.ServiceInstance("ServiceInstance", stub).RetrieveContent()


def main():
    req = json.load(sys.stdin)
    si = connect(req)
    try:
        content = pbm_content(si, req)
        pm = content.profileManager
        ids = pm.PbmQueryProfile(resourceType=pbm.profile.ResourceType(resourceType="STORAGE"), profileCategory="REQUIREMENT")
        policies = {p.profileId.uniqueId: p.name for p in pm.PbmRetrieveContent(profileIds=ids)} if ids else {}
        vm = next(v for v in objects(si.content, vim.VirtualMachine) if v.name == req["vm"])
        disks = []
        for d in vm.config.hardware.device:
            if not isinstance(d, vim.vm.device.VirtualDisk):
                continue
            ref = pbm.ServerObjectRef(objectType="virtualDiskId", key="%s:%d" % (vm._moId, d.key))
            disks.append({"key": d.key, "fileName": d.backing.fileName,
                          "profileIds": [p.uniqueId for p in pm.PbmQueryAssociatedProfile(entity=ref)]})
        print(json.dumps({"disks": disks, "policies": policies}))
    finally:
        Disconnect(si)


if __name__ == "__main__":
    main()
