#!/usr/bin/python3
"""Independent vSphere client for integration tests (Debian python3-pyvmomi).

Reads one JSON object on stdin:
  {"url": "https://127.0.0.1:PORT/sdk", "username": "...", "password": "...",
   "certFile": "/path/cert.pem" | null, "ops": [{"op": "...", ...}, ...]}
and prints one JSON array with a result per op: {"ok": true, ...} or
{"ok": false, "fault": "<vim fault type>", "message": "..."}. One connection for all ops.
"""
import json
import ssl
import sys
from urllib.parse import urlparse

import os

from pyVim.connect import Disconnect
from pyVmomi import vim, vmodl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from session import connect_sim  # noqa: E402


def fault_result(e):
    name = getattr(e, "_wsdlName", type(e).__name__)
    return {"ok": False, "fault": name, "message": getattr(e, "msg", str(e)) or ""}


def find(content, vimtype, name):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        for obj in view.view:
            if obj.name == name:
                return obj
    finally:
        view.Destroy()
    raise LookupError("no %s named %r" % (vimtype.__name__, name))


def names(content, vimtype):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        return [o.name for o in view.view]
    finally:
        view.Destroy()


def lun_dict(lun):
    return {
        "canonicalName": lun.canonicalName,
        "uuid": lun.uuid,
        "devicePath": getattr(lun, "devicePath", None),
        "deviceName": lun.deviceName,
        "lunType": lun.lunType,
        "vendor": (lun.vendor or "").strip(),
        "model": (lun.model or "").strip(),
        "capacityBytes": lun.capacity.block * lun.capacity.blockSize if getattr(lun, "capacity", None) else None,
        "type": lun._wsdlName,
    }


def backing_dict(dev):
    b = dev.backing
    out = {
        "key": dev.key,
        "label": dev.deviceInfo.label if dev.deviceInfo else None,
        "controllerKey": dev.controllerKey,
        "unitNumber": dev.unitNumber,
        "capacityInKB": dev.capacityInKB,
        "backingType": b._wsdlName,
        "fileName": getattr(b, "fileName", None),
        "diskMode": getattr(b, "diskMode", None),
        "uuid": getattr(b, "uuid", None),
    }
    if isinstance(b, vim.vm.device.VirtualDisk.FlatVer2BackingInfo):
        out["thinProvisioned"] = b.thinProvisioned
        out["eagerlyScrub"] = b.eagerlyScrub
        # a child disk (snapshot delta, linked clone): its parent chain, nearest first
        out["deltaDiskFormat"] = b.deltaDiskFormat
        chain, p = [], b.parent
        while p is not None:
            chain.append(p.fileName)
            p = p.parent
        out["parents"] = chain
    if isinstance(b, vim.vm.device.VirtualDisk.RawDiskMappingVer1BackingInfo):
        out["compatibilityMode"] = b.compatibilityMode
        out["deviceName"] = b.deviceName
        out["lunUuid"] = b.lunUuid
    return out


def wait_task(task):
    from pyVim.task import WaitForTask
    try:
        WaitForTask(task)
        return {"ok": True, "state": task.info.state}
    except vmodl.MethodFault as e:
        return fault_result(e)


def op_luns(si, content, a):
    host = find(content, vim.HostSystem, a["host"])
    config = [lun_dict(l) for l in host.config.storageDevice.scsiLun]
    storage = [lun_dict(l) for l in host.configManager.storageSystem.storageDeviceInfo.scsiLun]
    avail = [lun_dict(l) for l in host.configManager.datastoreSystem.QueryAvailableDisksForVmfs()]
    return {"ok": True, "config": config, "storageSystem": storage, "available": avail}


def op_create_vmfs(si, content, a):
    host = find(content, vim.HostSystem, a["host"])
    dss = host.configManager.datastoreSystem
    disk = [d for d in host.config.storageDevice.scsiLun if d.canonicalName == a["disk"]]
    if not disk:
        raise LookupError("no disk %s" % a["disk"])
    opts = dss.QueryVmfsDatastoreCreateOptions(devicePath=disk[0].devicePath, vmfsMajorVersion=a["major"])
    opt = [o for o in opts if isinstance(o.info, vim.host.VmfsDatastoreOption.AllExtentInfo)][0]
    spec = opt.spec
    spec.vmfs.volumeName = a["name"]
    if "blockSizeMb" in a:
        spec.vmfs.blockSizeMb = a["blockSizeMb"]
    if "blockSize" in a:
        spec.vmfs.blockSize = a["blockSize"]
    if "unmapGranularity" in a:
        spec.vmfs.unmapGranularity = a["unmapGranularity"]
    ds = dss.CreateVmfsDatastore(spec=spec)
    return {
        "ok": True,
        "datastore": ds._moId,
        "partitionFormat": spec.partition.partitionFormat,
        "startSector": spec.partition.partition[0].startSector,
    }


def op_datastore(si, content, a):
    ds = find(content, vim.Datastore, a["name"])
    out = {"ok": True, "type": ds.summary.type, "capacity": ds.summary.capacity, "freeSpace": ds.summary.freeSpace, "infoType": ds.info._wsdlName}
    if isinstance(ds.info, vim.host.VmfsDatastoreInfo):
        v = ds.info.vmfs
        out.update({
            "blockSizeMb": v.blockSizeMb, "blockSize": v.blockSize, "majorVersion": v.majorVersion,
            "version": v.version, "extent": [{"diskName": e.diskName, "partition": e.partition} for e in v.extent],
            "volumeName": v.name,
        })
    host = ds.host[0].key if ds.host else None
    if host is not None:
        mounts = host.configManager.storageSystem.fileSystemVolumeInfo.mountInfo
        out["mounts"] = [{"path": m.mountInfo.path, "name": m.volume.name, "type": m.volume.type} for m in mounts]
    return out


def op_remove_datastore(si, content, a):
    host = find(content, vim.HostSystem, a["host"])
    ds = find(content, vim.Datastore, a["name"])
    host.configManager.datastoreSystem.RemoveDatastore(datastore=ds)
    return {"ok": True}


def op_mounts(si, content, a):
    host = find(content, vim.HostSystem, a["host"])
    mounts = host.configManager.storageSystem.fileSystemVolumeInfo.mountInfo
    return {"ok": True, "hostDatastores": sorted(d.name for d in host.datastore),
            "mounts": sorted("%s:%s" % (m.volume.type, m.volume.name) for m in mounts)}


def op_create_nas(si, content, a):
    host = find(content, vim.HostSystem, a["host"])
    spec = vim.host.NasVolume.Specification(remoteHost=a["server"], remotePath=a["path"], localPath=a["name"],
                                            accessMode="readWrite", type=a.get("type", "NFS"))
    ds = host.configManager.datastoreSystem.CreateNasDatastore(spec)
    return {"ok": True, "datastore": ds._moId, "type": ds.summary.type, "infoType": ds.info._wsdlName,
            "remoteHost": ds.info.nas.remoteHost, "remotePath": ds.info.nas.remotePath,
            "hosts": sorted(m.key.name for m in ds.host)}


def op_datastores(si, content, a):
    return {"ok": True, "names": sorted(names(content, vim.Datastore))}


def op_vm_disks(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    disks = [backing_dict(d) for d in vm.config.hardware.device if isinstance(d, vim.vm.device.VirtualDisk)]
    return {"ok": True, "disks": disks}


def op_vm_nics(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    nics = [{"key": d.key, "type": d._wsdlName, "macAddress": d.macAddress, "addressType": d.addressType,
             "startConnected": d.connectable.startConnected if d.connectable else None,
             "connected": d.connectable.connected if d.connectable else None,
             "allowGuestControl": d.connectable.allowGuestControl if d.connectable else None}
            for d in vm.config.hardware.device if isinstance(d, vim.vm.device.VirtualEthernetCard)]
    return {"ok": True, "nics": nics, "powerState": vm.runtime.powerState}


def op_vm_disk_instances(si, content, a):
    """Each virtual disk of a VM with the PerformanceManager instance ESXi gives it: <type><bus>:<unit>
    from the disk's controller (API reference "Virtual Disk Counters": instance per virtual disk)."""
    vm = find(content, vim.VirtualMachine, a["vm"])
    devices = vm.config.hardware.device
    by_key = {d.key: d for d in devices}
    prefixes = [(vim.vm.device.VirtualSCSIController, "scsi"), (vim.vm.device.VirtualSATAController, "sata"),
                (vim.vm.device.VirtualNVMEController, "nvme"), (vim.vm.device.VirtualIDEController, "ide")]
    out = []
    for d in devices:
        if not isinstance(d, vim.vm.device.VirtualDisk):
            continue
        ctl = by_key.get(d.controllerKey)
        prefix = next((p for t, p in prefixes if isinstance(ctl, t)), None)
        instance = "%s%d:%d" % (prefix, ctl.busNumber, d.unitNumber) if prefix else None
        out.append({"fileName": getattr(d.backing, "fileName", None), "uuid": getattr(d.backing, "uuid", None), "instance": instance})
    return {"ok": True, "disks": out}


def scsi_controller(vm):
    for d in vm.config.hardware.device:
        if isinstance(d, vim.vm.device.VirtualSCSIController):
            return d
    raise LookupError("VM %s has no SCSI controller" % vm.name)


def op_add_rdm(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    ctrl = scsi_controller(vm)
    b = vim.vm.device.VirtualDisk.RawDiskMappingVer1BackingInfo()
    b.fileName = a.get("fileName", "")
    b.deviceName = a["deviceName"]
    b.compatibilityMode = a["mode"]
    if "lunUuid" in a:
        b.lunUuid = a["lunUuid"]
    disk = vim.vm.device.VirtualDisk(key=-1, controllerKey=ctrl.key, unitNumber=a["unit"], backing=b, capacityInKB=0)
    change = vim.vm.device.VirtualDeviceSpec(operation="add", fileOperation="create", device=disk)
    return wait_task(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(deviceChange=[change])))


def op_add_disk(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    ctrl = scsi_controller(vm)
    b = vim.vm.device.VirtualDisk.FlatVer2BackingInfo(fileName=a.get("fileName", ""), diskMode="persistent")
    b.thinProvisioned = a.get("thin", False)
    b.eagerlyScrub = a.get("eager", False)
    kb = a.get("capacityKB", 1024)
    disk = vim.vm.device.VirtualDisk(key=-1, controllerKey=ctrl.key, unitNumber=a["unit"], backing=b,
                                     capacityInKB=kb, capacityInBytes=kb * 1024)
    change = vim.vm.device.VirtualDeviceSpec(operation="add", device=disk)
    if a.get("create", True):
        change.fileOperation = "create"
    return wait_task(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(deviceChange=[change])))


def op_remove_disk(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    dev = [d for d in vm.config.hardware.device if d.key == a["key"]][0]
    change = vim.vm.device.VirtualDeviceSpec(operation="remove", device=dev)
    if a.get("destroy"):
        change.fileOperation = "destroy"
    return wait_task(vm.ReconfigVM_Task(spec=vim.vm.ConfigSpec(deviceChange=[change])))


def op_create_vdisk(si, content, a):
    dc = find(content, vim.Datacenter, a["datacenter"])
    spec = vim.VirtualDiskManager.FileBackedVirtualDiskSpec(diskType=a["diskType"], adapterType="lsiLogic",
                                                          capacityKb=a.get("capacityKB", 1024))
    return wait_task(content.virtualDiskManager.CreateVirtualDisk_Task(name=a["name"], datacenter=dc, spec=spec))


def op_create_vdisk_observe(si, content, a):
    """Creates a disk and records what a WaitForUpdatesEx watcher sees while the task runs."""
    PC = vmodl.query.PropertyCollector
    dc = find(content, vim.Datacenter, a["datacenter"])
    spec = vim.VirtualDiskManager.FileBackedVirtualDiskSpec(diskType="thin", adapterType="lsiLogic", capacityKb=1024)
    task = content.virtualDiskManager.CreateVirtualDisk_Task(name=a["name"], datacenter=dc, spec=spec)
    first = task.info.state
    pc = content.propertyCollector.CreatePropertyCollector()
    pc.CreateFilter(PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=task)],
                                  propSet=[PC.PropertySpec(type=vim.Task, pathSet=["info.state", "info.progress"])]),
                    partialUpdates=True)
    seen, version, state = [], "", first
    for _ in range(50):
        upd = pc.WaitForUpdatesEx(version, PC.WaitOptions(maxWaitSeconds=10))
        if upd is None:
            break
        version = upd.version
        for fs in upd.filterSet:
            for obj in fs.objectSet:
                for ch in obj.changeSet:
                    seen.append({"name": ch.name, "val": ch.val})
                    if ch.name == "info.state":
                        state = ch.val
        if state in ("success", "error"):
            break
    pc.Destroy()
    return {"ok": True, "firstState": first, "finalState": task.info.state, "seen": seen}


def op_page(si, content, a):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
    pc = content.propertyCollector
    spec = vmodl.query.PropertyCollector.FilterSpec(
        objectSet=[vmodl.query.PropertyCollector.ObjectSpec(obj=view, skip=True, selectSet=[
            vmodl.query.PropertyCollector.TraversalSpec(name="v", type=vim.view.ContainerView, path="view", skip=False)])],
        propSet=[vmodl.query.PropertyCollector.PropertySpec(type=vim.VirtualMachine, pathSet=["name"])])
    res = pc.RetrievePropertiesEx([spec], vmodl.query.PropertyCollector.RetrieveOptions(maxObjects=a["max"]))
    pages = [{"token": res.token, "names": [o.propSet[0].val for o in res.objects]}]
    if a.get("cancel") and res.token:
        pc.CancelRetrievePropertiesEx(res.token)
        try:
            pc.ContinueRetrievePropertiesEx(res.token)
            pages.append({"afterCancel": "no fault"})
        except vmodl.MethodFault as e:
            pages.append({"afterCancel": fault_result(e)["fault"]})
        return {"ok": True, "pages": pages}
    while res.token:
        res = pc.ContinueRetrievePropertiesEx(res.token)
        pages.append({"token": res.token, "names": [o.propSet[0].val for o in res.objects]})
    view.Destroy()
    return {"ok": True, "pages": pages, "all": sorted(names(content, vim.VirtualMachine))}


def op_about(si, content, a):
    ab = content.about
    out = {"ok": True, "apiType": ab.apiType, "version": ab.version, "fullName": ab.fullName, "apiVersion": ab.apiVersion, "build": ab.build,
           "hosts": sorted(names(content, vim.HostSystem)), "vms": sorted(names(content, vim.VirtualMachine))}
    if a.get("products"):
        # each host's own release: config.product and summary.config.product (AboutInfo)
        view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
        out["products"] = {h.name: {"version": h.config.product.version, "fullName": h.config.product.fullName,
                                    "apiVersion": h.config.product.apiVersion, "summaryVersion": h.summary.config.product.version}
                           for h in view.view}
    return out


# --- guest operations (vim.vm.guest.ProcessManager / FileManager) ---------------------------------
def guest_auth(a):
    return vim.vm.guest.NamePasswordAuthentication(username=a["guestUser"], password=a["guestPassword"], interactiveSession=False)


def guest_proc(p):
    return {"pid": p.pid, "name": p.name, "owner": p.owner, "cmdLine": p.cmdLine, "startTime": p.startTime.isoformat(),
            "endTime": p.endTime.isoformat() if p.endTime else None, "exitCode": p.exitCode}


def op_guest_start(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    spec = vim.vm.guest.ProcessManager.ProgramSpec(programPath=a["program"], arguments=a.get("arguments", ""),
                                                   workingDirectory=a.get("workingDirectory"), envVariables=a.get("env"))
    pid = content.guestOperationsManager.processManager.StartProgramInGuest(vm, guest_auth(a), spec)
    return {"ok": True, "pid": pid}


def op_guest_list(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    procs = content.guestOperationsManager.processManager.ListProcessesInGuest(vm, guest_auth(a), a.get("pids"))
    return {"ok": True, "processes": [guest_proc(p) for p in procs]}


def op_guest_terminate(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    content.guestOperationsManager.processManager.TerminateProcessInGuest(vm, guest_auth(a), a["pid"])
    return {"ok": True}


def op_guest_env(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    return {"ok": True, "env": list(content.guestOperationsManager.processManager.ReadEnvironmentVariableInGuest(vm, guest_auth(a), a.get("names")))}


def transfer_url(url, a):
    # the host part is "*" when it is the server the call went to (InitiateFileTransfer* reference)
    u = urlparse(url)
    if u.hostname == "*":
        c = urlparse(a["_sdk"])
        u = u._replace(netloc=c.netloc)
    return u.geturl()


def op_guest_upload(si, content, a):
    import urllib.request
    vm = find(content, vim.VirtualMachine, a["vm"])
    data = a["content"].encode()
    url = content.guestOperationsManager.fileManager.InitiateFileTransferToGuest(
        vm, guest_auth(a), a["path"], vim.vm.guest.FileManager.FileAttributes(), a.get("size", len(data)), a.get("overwrite", True))
    req = urllib.request.Request(transfer_url(url, a), data=data, method="PUT")
    try:
        with urllib.request.urlopen(req, context=a["_ctx"]) as r:
            return {"ok": True, "url": url, "status": r.status}
    except urllib.error.HTTPError as e:
        return {"ok": True, "url": url, "status": e.code}


def op_guest_download(si, content, a):
    import urllib.request
    vm = find(content, vim.VirtualMachine, a["vm"])
    info = content.guestOperationsManager.fileManager.InitiateFileTransferFromGuest(vm, guest_auth(a), a["path"])
    with urllib.request.urlopen(transfer_url(info.url, a), context=a["_ctx"]) as r:
        body = r.read().decode("utf-8", "replace")
    attrs = info.attributes
    return {"ok": True, "url": info.url, "size": info.size, "content": body, "attributes": attrs._wsdlName,
            "ownerId": getattr(attrs, "ownerId", None), "permissions": getattr(attrs, "permissions", None)}


def op_guest_mkdir(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    content.guestOperationsManager.fileManager.MakeDirectoryInGuest(vm, guest_auth(a), a["path"], a.get("parents", False))
    return {"ok": True}


def op_guest_rm(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    content.guestOperationsManager.fileManager.DeleteFileInGuest(vm, guest_auth(a), a["path"])
    return {"ok": True}


def op_guest_rmdir(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    content.guestOperationsManager.fileManager.DeleteDirectoryInGuest(vm, guest_auth(a), a["path"], a.get("recursive", False))
    return {"ok": True}


def op_guest_tempdir(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    p = content.guestOperationsManager.fileManager.CreateTemporaryDirectoryInGuest(vm, guest_auth(a), a.get("prefix", ""), a.get("suffix", ""), a.get("dir"))
    return {"ok": True, "path": p}


def op_power(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    return wait_task(vm.PowerOnVM_Task() if a["on"] else vm.PowerOffVM_Task())


def op_guest_vm(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    g = vm.guest
    return {"ok": True, "guestId": vm.config.guestId, "guestFamily": g.guestFamily, "toolsRunningStatus": g.toolsRunningStatus,
            "guestOperationsReady": g.guestOperationsReady, "toolsVersion": g.toolsVersion}


def op_vm_state(si, content, a):
    """A VM as a whole: every device (type, key, unit, backing file), power state, Tools, extraConfig, memory and CPUs."""
    vm = find(content, vim.VirtualMachine, a["vm"])
    devices = [{"type": type(d).__name__.split(".")[-1], "key": d.key, "controllerKey": d.controllerKey, "unitNumber": d.unitNumber,
                "fileName": getattr(d.backing, "fileName", None) if d.backing else None} for d in vm.config.hardware.device]
    return {"ok": True, "powerState": vm.runtime.powerState, "toolsRunningStatus": vm.guest.toolsRunningStatus,
            "devices": sorted(devices, key=lambda d: d["key"]), "extraConfig": sorted("%s=%s" % (o.key, o.value) for o in vm.config.extraConfig),
            "memoryMB": vm.config.hardware.memoryMB, "numCPU": vm.config.hardware.numCPU}


def snapshot_tree(nodes):
    return [{"name": n.name, "id": n.snapshot._moId, "children": snapshot_tree(n.childSnapshotList or [])} for n in nodes or []]


def find_snapshot(vm, name):
    def walk(nodes):
        for n in nodes or []:
            if n.name == name:
                return n.snapshot
            found = walk(n.childSnapshotList)
            if found is not None:
                return found
        return None
    snap = walk(vm.snapshot.rootSnapshotList if vm.snapshot else [])
    if snap is None:
        raise LookupError("VM %s has no snapshot named %r" % (vm.name, name))
    return snap


def op_snapshots(si, content, a):
    """A VM's snapshot tree (VirtualMachine.snapshot.rootSnapshotList): names, ids, children."""
    vm = find(content, vim.VirtualMachine, a["vm"])
    return {"ok": True, "tree": snapshot_tree(vm.snapshot.rootSnapshotList if vm.snapshot else [])}


def op_create_snapshot(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    return wait_task(vm.CreateSnapshot_Task(name=a["name"], description=a.get("description", ""), memory=False, quiesce=False))


def op_remove_snapshot(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    return wait_task(find_snapshot(vm, a["name"]).RemoveSnapshot_Task(removeChildren=False))


def op_clone_linked(si, content, a):
    """CloneVM_Task with diskMoveType createNewChildDiskBacking, from the named snapshot (or none)."""
    vm = find(content, vim.VirtualMachine, a["vm"])
    loc = vim.vm.RelocateSpec(diskMoveType="createNewChildDiskBacking", pool=vm.resourcePool)
    spec = vim.vm.CloneSpec(location=loc, powerOn=False, template=False)
    if a.get("snapshot"):
        spec.snapshot = find_snapshot(vm, a["snapshot"])
    return wait_task(vm.CloneVM_Task(folder=vm.parent, name=a["name"], spec=spec))


def op_destroy_vm(si, content, a):
    vm = find(content, vim.VirtualMachine, a["vm"])
    return wait_task(vm.Destroy_Task())


def op_sessions(si, content, a):
    """SessionManager.sessionList: every session the server holds (this probe's own left out)."""
    sm = content.sessionManager
    mine = sm.currentSession.key
    return {"ok": True, "sessions": [{"key": s.key, "userName": s.userName, "userAgent": s.userAgent, "loginTime": s.loginTime.isoformat()}
                                      for s in sm.sessionList if s.key != mine]}


OPS = {
    "guest-start": op_guest_start, "guest-list": op_guest_list, "guest-terminate": op_guest_terminate, "guest-env": op_guest_env,
    "guest-upload": op_guest_upload, "guest-download": op_guest_download, "guest-vm": op_guest_vm,
    "power": op_power, "guest-mkdir": op_guest_mkdir, "guest-rm": op_guest_rm, "guest-rmdir": op_guest_rmdir, "guest-tempdir": op_guest_tempdir,
    "about": op_about, "luns": op_luns, "create-vmfs": op_create_vmfs, "datastore": op_datastore,
    "datastores": op_datastores, "mounts": op_mounts, "create-nas": op_create_nas, "remove-datastore": op_remove_datastore, "vm-disks": op_vm_disks,
    "vm-disk-instances": op_vm_disk_instances, "vm-nics": op_vm_nics,
    "add-rdm": op_add_rdm, "add-disk": op_add_disk, "remove-disk": op_remove_disk,
    "create-vdisk": op_create_vdisk, "create-vdisk-observe": op_create_vdisk_observe, "page": op_page, "sessions": op_sessions,
    "vm-state": op_vm_state,
    "snapshots": op_snapshots, "create-snapshot": op_create_snapshot, "remove-snapshot": op_remove_snapshot,
    "clone-linked": op_clone_linked, "destroy-vm": op_destroy_vm,
}


def main():
    req = json.load(sys.stdin)
    u = urlparse(req["url"])
    if req.get("certFile"):
        ctx = ssl.create_default_context(cafile=req["certFile"])
    else:
        ctx = ssl._create_unverified_context()
    results = []
    try:
        si = connect_sim(u.hostname, u.port, req["username"], req["password"], ctx)
    except vmodl.MethodFault as e:
        print(json.dumps([fault_result(e)]))
        return 0
    try:
        content = si.RetrieveContent()
        for a in req["ops"]:
            fn = OPS.get(a["op"])
            a = dict(a, _ctx=ctx, _sdk=req["url"])
            if fn is None:
                results.append({"ok": False, "fault": "UnknownOp", "message": a["op"]})
                continue
            try:
                results.append(fn(si, content, a))
            except vmodl.MethodFault as e:
                results.append(fault_result(e))
            except LookupError as e:
                results.append({"ok": False, "fault": "LookupError", "message": str(e)})
            except Exception as e:  # connection dropped by the harness, etc.
                results.append({"ok": False, "fault": "ConnectionError", "message": "%s: %s" % (type(e).__name__, e)})
    finally:
        Disconnect(si)
    print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
