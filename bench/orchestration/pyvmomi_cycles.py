#!/usr/bin/python3
"""The orchestration benchmark's pyvmomi side (Debian python3-pyvmomi): N cycles of
create+attach a thin disk, create+attach an eager-zeroed disk, detach+delete both, making the same
vSphere calls as storsweep's client: read config.hardware.device through the PropertyCollector,
ReconfigVM_Task, wait for the task (pyVim.task.WaitForTask, pyvmomi's standard wait, built on
WaitForUpdates), and read the devices again to find the new disk's key.

stdin: {"url", "username", "password", "certFile", "vm", "datastore", "cycles", "sizeMb", "prefix"}
stdout: {"connectMs": float, "cycleMs": [float, ...]}

With {"detachUnit": n} instead of "cycles" it detaches and deletes the disk at unit n of the first
SCSI controller and exits: the Ansible benchmark's stand-in for vmware_guest_disk state=absent,
which cannot find explicitly placed disks on the simulator (see bench/orchestration.ts).
"""
import json
import ssl
import sys
import time
from urllib.parse import urlparse

from pyVim.connect import SmartConnect, Disconnect
from pyVim.task import WaitForTask
from pyVmomi import vim, vmodl


def read_devices(si, vm):
    pc = si.content.propertyCollector
    spec = vmodl.query.PropertyCollector.FilterSpec(
        objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=vm, skip=False)],
        propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim.VirtualMachine, pathSet=["config.hardware.device"])],
    )
    res = pc.RetrievePropertiesEx([spec], vmodl.query.PropertyCollector.RetrieveOptions())
    return list(res.objects[0].propSet[0].val)


def free_unit(devices, ctrl):
    used = {d.unitNumber for d in devices if d.controllerKey == ctrl.key}
    used.add(ctrl.scsiCtlrUnitNumber or 7)
    return next(u for u in range(16) if u not in used)


def create_disk(si, vm, datastore, name, size_kb, fmt):
    devices = read_devices(si, vm)
    ctrl = sorted((d for d in devices if isinstance(d, vim.vm.device.VirtualSCSIController)), key=lambda d: d.busNumber)[0]
    unit = free_unit(devices, ctrl)
    backing = vim.vm.device.VirtualDisk.FlatVer2BackingInfo(
        fileName="[%s] %s" % (datastore, name), diskMode="independent_persistent",
        thinProvisioned=(fmt == "thin"), eagerlyScrub=(fmt == "eagerzeroedthick"))
    disk = vim.vm.device.VirtualDisk(key=-1, backing=backing, controllerKey=ctrl.key, unitNumber=unit,
                                     capacityInKB=size_kb, capacityInBytes=size_kb * 1024)
    change = vim.vm.device.VirtualDeviceSpec(operation="add", fileOperation="create", device=disk)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[change])), si=si)
    for d in read_devices(si, vm):
        if isinstance(d, vim.vm.device.VirtualDisk) and d.controllerKey == ctrl.key and d.unitNumber == unit:
            return d.key
    raise LookupError("disk %s did not appear" % name)


def detach_disk(si, vm, key):
    device = next(d for d in read_devices(si, vm) if d.key == key)
    change = vim.vm.device.VirtualDeviceSpec(operation="remove", fileOperation="destroy", device=device)
    WaitForTask(vm.ReconfigVM_Task(vim.vm.ConfigSpec(deviceChange=[change])), si=si)


def find_vm(si, name):
    view = si.content.viewManager.CreateContainerView(si.content.rootFolder, [vim.VirtualMachine], True)
    try:
        return next(v for v in view.view if v.name == name)
    finally:
        view.Destroy()


def main():
    req = json.load(sys.stdin)
    u = urlparse(req["url"])
    ctx = ssl.create_default_context(cafile=req["certFile"])
    ctx.check_hostname = False
    t0 = time.perf_counter()
    si = SmartConnect(host=u.hostname, port=u.port or 443, user=req["username"], pwd=req["password"], sslContext=ctx)
    connect_ms = (time.perf_counter() - t0) * 1000
    try:
        vm = find_vm(si, req["vm"])
        if "detachUnit" in req:
            devices = read_devices(si, vm)
            ctrl = sorted((d for d in devices if isinstance(d, vim.vm.device.VirtualSCSIController)), key=lambda d: d.busNumber)[0]
            disk = next(d for d in devices if isinstance(d, vim.vm.device.VirtualDisk) and d.controllerKey == ctrl.key and d.unitNumber == req["detachUnit"])
            detach_disk(si, vm, disk.key)
            return
        size_kb = req["sizeMb"] * 1024
        out = []
        for i in range(req["cycles"]):
            start = time.perf_counter()
            thin = create_disk(si, vm, req["datastore"], "%s-py-%d-thin.vmdk" % (req["prefix"], i), size_kb, "thin")
            eager = create_disk(si, vm, req["datastore"], "%s-py-%d-eager.vmdk" % (req["prefix"], i), size_kb, "eagerzeroedthick")
            detach_disk(si, vm, thin)
            detach_disk(si, vm, eager)
            out.append((time.perf_counter() - start) * 1000)
        print(json.dumps({"connectMs": connect_ms, "cycleMs": out}))
    finally:
        Disconnect(si)


if __name__ == "__main__":
    main()
