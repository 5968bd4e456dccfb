package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// createdDisk is a flat (VMDK) disk a ReconfigVM_Task creates, with the datastore its file is
// created on: what the NFS rule (nfs.go) and the free-space rule (capacity.go) both look at.
type createdDisk struct {
	// index is the change's place in spec.deviceChange (InvalidDeviceSpec.deviceIndex)
	index int
	disk  *types.VirtualDisk
	flat  *types.VirtualDiskFlatVer2BackingInfo
	ds    *simulator.Datastore
	// nas: the datastore is NFS (NasDatastoreInfo): the NFS server, not the host, allocates
	nas bool
}

// createdDisks lists the flat disks req creates (operation add, fileOperation create) on a datastore
// the VM's host mounts, in the request's order; a disk on a datastore not found is left to vcsim.
func createdDisks(vm *simulator.VirtualMachine, req *types.ReconfigVM_Task) []createdDisk {
	var out []createdDisk
	for i, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		if spec.Operation != types.VirtualDeviceConfigSpecOperationAdd || spec.FileOperation != types.VirtualDeviceConfigSpecFileOperationCreate {
			continue
		}
		disk, ok := spec.Device.(*types.VirtualDisk)
		if !ok {
			continue
		}
		flat, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
		if !ok {
			continue
		}
		ds := datastoreNamed(vm, datastoreOfPath(flat.FileName))
		if ds == nil {
			continue
		}
		_, nas := ds.Info.(*types.NasDatastoreInfo)
		out = append(out, createdDisk{index: i, disk: disk, flat: flat, ds: ds, nas: nas})
	}
	return out
}
