package main

// What the call log (GET /_harness/log, harness.go callEntry) says beyond method and object: which
// session made a call, and for ReconfigVM_Task each disk change (operation and file). Tests read it
// as an independent record of what clients did to a VM, e.g. that two storsweep workers never had
// disks of two permutations attached to one VM at once, and of which datastore each create and
// remove was about (a sweep that provisions anew per repetition). The session is a short hash of
// its cookie.

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

func sessionTag(cookie string) string {
	if cookie == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(cookie))
	return hex.EncodeToString(sum[:6])
}

// deviceChanges: "add <file>", "remove <file>", "edit <file>" for each disk of a ReconfigVM_Task.
func deviceChanges(method *simulator.Method) []string {
	req, ok := method.Body.(*types.ReconfigVM_Task)
	if !ok {
		return nil
	}
	var out []string
	for _, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		file := ""
		if disk, ok := spec.Device.(*types.VirtualDisk); ok {
			if b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
				file = b.GetVirtualDeviceFileBackingInfo().FileName
			}
		}
		if file == "" {
			continue
		}
		out = append(out, string(spec.Operation)+" "+file)
	}
	return out
}

// datastoreName: the datastore a CreateVmfsDatastore, CreateNasDatastore or RemoveDatastore call
// names (the volume to create, or the one to remove, looked up before the call runs); "" otherwise.
func datastoreName(method *simulator.Method) string {
	switch req := method.Body.(type) {
	case *types.CreateVmfsDatastore:
		return req.Spec.Vmfs.VolumeName
	case *types.CreateNasDatastore:
		return req.Spec.LocalPath
	case *types.RemoveDatastore:
		if ds, ok := simulator.Map.Get(req.Datastore).(*simulator.Datastore); ok {
			return ds.Name
		}
	}
	return ""
}

// vmName: the VM a CloneVM_Task makes (its name), a Destroy_Task removes, or whose snapshot a
// {Create,Remove}Snapshot_Task makes or removes (looked up before the call runs); "" otherwise.
func vmName(method *simulator.Method) string {
	switch req := method.Body.(type) {
	case *types.CloneVM_Task:
		return req.Name
	case *types.Destroy_Task, *types.CreateSnapshot_Task:
		if vm, ok := simulator.Map.Get(method.This).(*simulator.VirtualMachine); ok {
			return vm.Name
		}
	case *types.RemoveSnapshot_Task:
		if vm := snapshotVM(req.This); vm != nil {
			return vm.Name
		}
	// whose counters a client asked for (perf.go): a test can tell one VM's from another's
	case *types.QueryAvailablePerfMetric:
		return entityVM(req.Entity)
	case *types.QueryPerfProviderSummary:
		return entityVM(req.Entity)
	case *types.QueryPerf:
		if len(req.QuerySpec) > 0 {
			return entityVM(req.QuerySpec[0].Entity)
		}
	}
	return ""
}

// entityVM: the name of the VM an entity reference names, "" when it names no VM.
func entityVM(ref types.ManagedObjectReference) string {
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok {
		return vm.Name
	}
	return ""
}

// snapshotCalled: the snapshot a CreateSnapshot_Task makes or a RemoveSnapshot_Task removes (its
// name in its VM's tree, looked up before the call runs); "" otherwise.
func snapshotCalled(method *simulator.Method) string {
	switch req := method.Body.(type) {
	case *types.CreateSnapshot_Task:
		return req.Name
	case *types.RemoveSnapshot_Task:
		if vm := snapshotVM(req.This); vm != nil {
			return snapshotName(vm, req.This)
		}
	}
	return ""
}

func snapshotVM(ref types.ManagedObjectReference) *simulator.VirtualMachine {
	s, ok := simulator.Map.Get(ref).(*simulator.VirtualMachineSnapshot)
	if !ok {
		return nil
	}
	vm, _ := simulator.Map.Get(s.Vm).(*simulator.VirtualMachine)
	return vm
}
