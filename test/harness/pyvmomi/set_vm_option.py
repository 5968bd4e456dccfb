#!/usr/bin/python3
"""Sets one advanced configuration parameter (extraConfig) of a VM, as an administrator would in
VM Options > Advanced > Configuration Parameters, for integration tests (Debian python3-pyvmomi).

stdin: {"url", "username", "password", "certFile", "vm": name, "key": "disk.EnableUUID", "value": "FALSE"}
stdout: {"value": the VM's value of key after the reconfiguration}
"""
import json
import sys

from pyVim.connect import Disconnect
from pyVim.task import WaitForTask
from pyVmomi import vim

from session import connect, objects


def main():
    req = json.load(sys.stdin)
    si = connect(req)
    try:
        vm = next(v for v in objects(si.RetrieveContent(), vim.VirtualMachine) if v.name == req["vm"])
        spec = vim.vm.ConfigSpec(extraConfig=[vim.option.OptionValue(key=req["key"], value=req["value"])])
        WaitForTask(vm.ReconfigVM_Task(spec))
        # the last entry of the key wins, as the provider and the harness read it
        got = [o.value for o in vm.config.extraConfig if o.key.lower() == req["key"].lower()]
        print(json.dumps({"value": got[-1] if got else None}))
    finally:
        Disconnect(si)


if __name__ == "__main__":
    main()
