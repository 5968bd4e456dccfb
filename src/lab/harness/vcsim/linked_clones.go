package main

// Linked clones (issue 32, `vm.clone: linked`): CloneVM_Task with spec.snapshot and
// location.diskMoveType = createNewChildDiskBacking. govmomi 0.24's simulator ignores DiskMoveType
// (simulator/virtual_machine.go CloneVMTask: "TODO: consider VirtualMachineCloneSpec.DiskMoveType")
// and copies every disk; its CreateSnapshot_Task shares the VM's live device objects with the
// snapshot's config, so the snapshot's disks change when the VM's do. The harness keeps the rules
// vSphere documents, each with its source (the API reference at
// developer.broadcom.com/xapis/virtual-infrastructure-json-api/latest/data-structures/, the
// Workstation page at pubs.vmware.com/workstation-10/topic/com.vmware.ws.using.doc/
// GUID-BA264A65-C50F-4345-A787-DCC5C5324DD1.html):
//   - createNewChildDiskBacking without spec.snapshot is refused. vSphere Web Services API
//     reference, VirtualMachineRelocateDiskMoveOptions.createNewChildDiskBacking: "the original
//     virtual machine's disks are now all being shared. This is only safe if the clone was taken
//     from a snapshot point, because snapshot points are always read-only. Thus for a clone this
//     option is only valid when cloning from a snapshot." The reference names no fault for it:
//     InvalidArgument (invalidProperty spec.snapshot) here. A spec.snapshot that is not a snapshot
//     of the VM cloned is refused the same way (VirtualMachineCloneSpec.snapshot: the snapshot of
//     this VM the clone is based on).
//   - a linked clone's disks are child disks: each one's backing.parent is the snapshot's disk, the
//     file the snapshot's config names (API reference, VirtualMachineSnapshot.config: "The datastore
//     paths for the virtual machine disks point to the head of the disk chain that represents the
//     disk at this given snapshot"); the child is a redo log (deltaDiskFormat redoLogFormat) in the
//     clone's own folder, so Destroy_Task of the clone deletes its delta only (the simulator deletes
//     the VM's folder, config.files.logDirectory).
//   - the snapshot keeps the disks as they were when it was taken: its config holds copies.
//   - a snapshot a linked clone's disk has as parent is not removed (RemoveSnapshot_Task), and a VM
//     whose disk or snapshot is such a parent is not destroyed, while that clone exists. VMware
//     Workstation Pro 17, "Linked clones": "You cannot delete a linked clone snapshot without
//     destroying the linked clone"; Fusion Pro 10, "Using Linked Clones": "you cannot delete a parent
//     if it has a clone. You must first delete all linked clones and snapshots". The vSphere fault is
//     not documented: ResourceInUse (type, name of the clone) here.

import (
	"fmt"
	"sort"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

const createNewChildDiskBacking = string(types.VirtualMachineRelocateDiskMoveOptionsCreateNewChildDiskBacking)

// snapshotsOf: every snapshot object of the VM, depth first (the tree as the VM reports it).
func snapshotsOf(vm *simulator.VirtualMachine) []*simulator.VirtualMachineSnapshot {
	var refs []types.ManagedObjectReference
	var walk func(tree []types.VirtualMachineSnapshotTree)
	walk = func(tree []types.VirtualMachineSnapshotTree) {
		for _, t := range tree {
			refs = append(refs, t.Snapshot)
			walk(t.ChildSnapshotList)
		}
	}
	simulator.Map.WithLock(vm, func() {
		if vm.Snapshot != nil {
			walk(vm.Snapshot.RootSnapshotList)
		}
	})
	var out []*simulator.VirtualMachineSnapshot
	for _, r := range refs {
		if s, ok := simulator.Map.Get(r).(*simulator.VirtualMachineSnapshot); ok {
			out = append(out, s)
		}
	}
	return out
}

// snapshotName: a snapshot's name in its VM's tree ("" when not found).
func snapshotName(vm *simulator.VirtualMachine, ref types.ManagedObjectReference) string {
	name := ""
	var walk func(tree []types.VirtualMachineSnapshotTree)
	walk = func(tree []types.VirtualMachineSnapshotTree) {
		for _, t := range tree {
			if t.Snapshot == ref {
				name = t.Name
			}
			walk(t.ChildSnapshotList)
		}
	}
	simulator.Map.WithLock(vm, func() {
		if vm.Snapshot != nil {
			walk(vm.Snapshot.RootSnapshotList)
		}
	})
	return name
}

// flatDisks: the flat-backed disks of a device list, in device order.
func flatDisks(devs []types.BaseVirtualDevice) []*types.VirtualDiskFlatVer2BackingInfo {
	var out []*types.VirtualDiskFlatVer2BackingInfo
	for _, d := range devs {
		if disk, ok := d.(*types.VirtualDisk); ok {
			if b, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok {
				out = append(out, b)
			}
		}
	}
	return out
}

// parentFiles: every disk file some VM's disk has in its parent chain, with the VMs that have it.
func parentFiles() map[string][]string {
	out := map[string][]string{}
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm, ok := e.(*simulator.VirtualMachine)
		if !ok {
			continue
		}
		simulator.Map.WithLock(vm, func() {
			for _, b := range flatDisks(vm.Config.Hardware.Device) {
				for p := b.Parent; p != nil; p = p.Parent {
					out[p.FileName] = append(out[p.FileName], vm.Name)
				}
			}
		})
	}
	return out
}

// inUseBy: the first (by name) VM other than `self` that has one of files as a parent disk.
func inUseBy(files []string, self string) (string, string) {
	parents := parentFiles()
	for _, f := range files {
		users := append([]string(nil), parents[f]...)
		sort.Strings(users)
		for _, u := range users {
			if u != self {
				return f, u
			}
		}
	}
	return "", ""
}

func snapshotDiskFiles(s *simulator.VirtualMachineSnapshot) []string {
	var out []string
	for _, b := range flatDisks(s.Config.Hardware.Device) {
		out = append(out, b.FileName)
	}
	return out
}

// linkedCloneRule: the fault a real vSphere gives the call under the rules above, or nil.
func linkedCloneRule(method *simulator.Method) (types.BaseMethodFault, string) {
	switch req := method.Body.(type) {
	case *types.CloneVM_Task:
		return linkedCloneSpecRule(req)
	case *types.RemoveSnapshot_Task:
		s, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachineSnapshot)
		if !ok {
			return nil, ""
		}
		vm, _ := simulator.Map.Get(s.Vm).(*simulator.VirtualMachine)
		self := ""
		if vm != nil {
			self = vm.Name
		}
		if file, user := inUseBy(snapshotDiskFiles(s), self); user != "" {
			return &types.ResourceInUse{Type: "VirtualMachine", Name: user}, fmt.Sprintf("The snapshot's disk %s is the parent of a disk of linked clone %s; destroy the clone first.", file, user)
		}
	case *types.Destroy_Task:
		vm, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachine)
		if !ok {
			return nil, ""
		}
		var files []string
		simulator.Map.WithLock(vm, func() {
			for _, b := range flatDisks(vm.Config.Hardware.Device) {
				files = append(files, b.FileName)
			}
		})
		for _, s := range snapshotsOf(vm) {
			files = append(files, snapshotDiskFiles(s)...)
		}
		if file, user := inUseBy(files, vm.Name); user != "" {
			return &types.ResourceInUse{Type: "VirtualMachine", Name: user}, fmt.Sprintf("The disk %s of VM %s is the parent of a disk of linked clone %s; destroy the clone first.", file, vm.Name, user)
		}
	}
	return nil, ""
}

func linkedCloneSpecRule(req *types.CloneVM_Task) (types.BaseMethodFault, string) {
	linked := req.Spec.Location.DiskMoveType == createNewChildDiskBacking
	for _, d := range req.Spec.Location.Disk {
		linked = linked || d.DiskMoveType == createNewChildDiskBacking
	}
	if req.Spec.Snapshot == nil {
		if linked {
			return &types.InvalidArgument{InvalidProperty: "spec.snapshot"}, "A linked clone (diskMoveType createNewChildDiskBacking) is only valid when cloning from a snapshot."
		}
		return nil, ""
	}
	vm, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachine)
	if !ok {
		return nil, ""
	}
	for _, s := range snapshotsOf(vm) {
		if s.Self == *req.Spec.Snapshot {
			return nil, ""
		}
	}
	return &types.InvalidArgument{InvalidProperty: "spec.snapshot"}, fmt.Sprintf("%s is not a snapshot of VM %s.", req.Spec.Snapshot.Value, vm.Name)
}

// snapshotHook: once CreateSnapshot_Task succeeded, every snapshot of the VM keeps copies of its
// devices (the simulator's share the VM's live objects; a later clone empties their file names).
func (h *harness) snapshotHook(method *simulator.Method) func(ok bool) {
	vm, isVM := simulator.Map.Get(method.This).(*simulator.VirtualMachine)
	if !isVM {
		return nil
	}
	return func(ok bool) {
		if !ok {
			return
		}
		var live []types.BaseVirtualDevice
		simulator.Map.WithLock(vm, func() { live = vm.Config.Hardware.Device })
		for _, s := range snapshotsOf(vm) {
			simulator.Map.WithLock(s, func() {
				if sharesDevices(s.Config.Hardware.Device, live) {
					s.Config.Hardware.Device = copyDevices(s.Config.Hardware.Device)
				}
			})
		}
	}
}

// sharesDevices: whether two device lists hold one same device object.
func sharesDevices(a, b []types.BaseVirtualDevice) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// linkClone: after a successful linked clone, each of the clone's disks becomes a child of the
// snapshot's disk at the same place (device order), a redo log in the clone's own folder.
func linkClone(req *types.CloneVM_Task, clone *simulator.VirtualMachine) {
	if req.Spec.Snapshot == nil || req.Spec.Location.DiskMoveType != createNewChildDiskBacking {
		return
	}
	s, ok := simulator.Map.Get(*req.Spec.Snapshot).(*simulator.VirtualMachineSnapshot)
	if !ok {
		return
	}
	var parents []*types.VirtualDiskFlatVer2BackingInfo
	simulator.Map.WithLock(s, func() {
		for _, b := range flatDisks(s.Config.Hardware.Device) {
			p := *b
			parents = append(parents, &p)
		}
	})
	simulator.Map.WithLock(clone, func() {
		for i, b := range flatDisks(clone.Config.Hardware.Device) {
			if i >= len(parents) {
				break
			}
			b.Parent = parents[i]
			b.DeltaDiskFormat = string(types.VirtualDiskDeltaDiskFormatRedoLogFormat)
		}
		simulator.Map.Update(clone, []types.PropertyChange{{Name: "config.hardware.device", Val: clone.Config.Hardware.Device}})
	})
}
