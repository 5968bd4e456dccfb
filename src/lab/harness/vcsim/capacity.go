package main

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// A thick disk must fit in the datastore's free space; a thin one may overcommit it.
//
//   - thick: "Space required for the virtual disk is allocated during creation"; thin: "space
//     required for the virtual disk is not allocated during creation, but is supplied, zeroed out,
//     on demand" [VMware vSphere 6.5 Storage: "Supported Disk Formats", GUID-9CC98802-82D9-44B0-9735-97675258FAAE].
//   - the fault: NoDiskSpace (extends FileFault: `file`, `datastore` "the name of the datastore with
//     insufficient disk space"; "thrown when an operation fails because of insufficient disk space")
//     [vSphere Web Services API 8.0U3, vim.fault.NoDiskSpace]. Which fault a host puts in a
//     ReconfigVM_Task's or CreateVirtualDisk_Task's error is not documented; NoDiskSpace is the one the
//     API has for the condition. The message text is the harness's own (unverified).
//
// vcsim 0.24 subtracts every disk a ReconfigVM_Task adds from the datastore's free space, thin ones
// and RDM mapping files (the LUN's size) too (simulator/virtual_machine.go configureDevice); a real
// host allocates neither at creation, so they are given back before the comparison.

// thickFree is the space a new thick disk can take on ds.
func thickFree(ds *simulator.Datastore) int64 {
	free := ds.Summary.FreeSpace
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm, ok := e.(*simulator.VirtualMachine)
		if !ok || vm.Config == nil {
			continue
		}
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			switch b := disk.Backing.(type) {
			case *types.VirtualDiskFlatVer2BackingInfo:
				if b.ThinProvisioned != nil && *b.ThinProvisioned && datastoreOfPath(b.FileName) == ds.Name {
					free += diskBytes(disk)
				}
			case *types.VirtualDiskRawDiskMappingVer1BackingInfo:
				if datastoreOfPath(b.FileName) == ds.Name {
					free += diskBytes(disk)
				}
			}
		}
	}
	return free
}

func diskBytes(disk *types.VirtualDisk) int64 {
	if disk.CapacityInBytes == 0 {
		return disk.CapacityInKB * 1024
	}
	return disk.CapacityInBytes
}

func noDiskSpace(file, datastore string) *types.NoDiskSpace {
	return &types.NoDiskSpace{FileFault: types.FileFault{File: file}, Datastore: datastore}
}

func noDiskSpaceMessage(datastore string, need, free int64) string {
	return fmt.Sprintf("Insufficient disk space on datastore '%s' (%d bytes needed, %d bytes free).", datastore, need, free)
}

// capacityRules refuses a ReconfigVM_Task that creates thick disks larger than their datastores' free
// space (the disks of one spec add up).
func capacityRules(vm *simulator.VirtualMachine, req *types.ReconfigVM_Task) (bool, types.BaseMethodFault) {
	want := map[string]int64{}
	for _, c := range createdDisks(vm, req) {
		if c.nas || (c.flat.ThinProvisioned != nil && *c.flat.ThinProvisioned) {
			continue // thin, or on NFS, where the NFS server allocates (nfs.go): thin
		}
		want[c.ds.Name] += diskBytes(c.disk)
		if free := thickFree(c.ds); want[c.ds.Name] > free {
			return false, noDiskSpace(c.flat.FileName, c.ds.Name)
		}
	}
	return false, nil
}

// createDiskCapacity is the fault a CreateVirtualDisk_Task of a thick disk larger than its
// datastore's free space ends in, with its message; nil when it fits (or is thin, or not a file).
func createDiskCapacity(req *types.CreateVirtualDisk_Task) (types.BaseMethodFault, string) {
	spec, ok := req.Spec.(*types.FileBackedVirtualDiskSpec)
	if !ok || spec.DiskType == string(types.VirtualDiskTypeThin) {
		return nil, ""
	}
	name := datastoreOfPath(req.Name)
	for _, e := range simulator.Map.All("Datastore") {
		ds, ok := e.(*simulator.Datastore)
		if !ok || ds.Name != name {
			continue
		}
		if _, nas := ds.Info.(*types.NasDatastoreInfo); nas {
			return nil, ""
		}
		need := spec.CapacityKb * 1024
		if free := thickFree(ds); need > free {
			return noDiskSpace(req.Name, ds.Name), noDiskSpaceMessage(ds.Name, need, free)
		}
	}
	return nil, ""
}
