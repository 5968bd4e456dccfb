package main

import (
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// NFS datastores without hardware acceleration (VAAI-NAS) have thin disks only.
//
//   - "NFS datastores with Hardware Acceleration and VMFS datastores support the following disk
//     provisioning policies [Thick Provision Lazy Zeroed, Thick Provision Eager Zeroed, Thin
//     Provision]. On NFS datastores that do not support Hardware Acceleration, only thin format is
//     available." [VMware vSphere 6.5 Virtual Machine Administration and 7.0 Storage: "About Virtual
//     Disk Provisioning Policies", GUID-4C0F4D73-82F2-4B81-8AA7-1DD752A8A5AC; same text in 6.0, 8.0]
//   - "The only disk formats you can use for NFS are thin, thick, zeroedthick and 2gbsparse. Thick,
//     zeroedthick and thin formats usually behave the same because the NFS server and not the ESXi
//     host determines the allocation policy. The default allocation policy on most NFS servers is
//     thin." [VMware vSphere 6.5 Storage: "Disk Formats on NFS Datastores", GUID-9CC98802-82D9-44B0-9735-97675258FAAE]
//
// So on the lab's NFS datastores (no NAS plugin is installed on the simulated hosts): a lazy-zeroed
// thick disk is created — and reads back — thin (thinProvisioned true), as the NFS server
// allocates it; eager-zeroed thick is not an NFS format and the reconfiguration fails. The exact
// fault a host raises for it is not documented (real-product-rules §8); the harness answers with
// InvalidDeviceBacking (an InvalidDeviceSpec naming the device's index), the fault the API
// reference gives ReconfigVM_Task for a backing the host cannot provide.

// datastoreNamed finds a datastore the VM's host mounts by name.
func datastoreNamed(vm *simulator.VirtualMachine, name string) *simulator.Datastore {
	host := vmHost(vm)
	if host == nil {
		return nil
	}
	for _, ref := range host.Datastore {
		if ds, ok := simulator.Map.Get(ref).(*simulator.Datastore); ok && ds.Name == name {
			return ds
		}
	}
	return nil
}

func datastoreOfPath(p string) string {
	p = strings.TrimSpace(p)
	if !strings.HasPrefix(p, "[") {
		return ""
	}
	if i := strings.Index(p, "]"); i > 0 {
		return p[1:i]
	}
	return ""
}

// nfsProvisioning applies the NFS rule to disks created by a ReconfigVM_Task; it reports whether
// it changed the request, or the fault the task must fail with.
func nfsProvisioning(vm *simulator.VirtualMachine, req *types.ReconfigVM_Task) (bool, types.BaseMethodFault) {
	changed := false
	for _, c := range createdDisks(vm, req) {
		if !c.nas {
			continue
		}
		if c.flat.EagerlyScrub != nil && *c.flat.EagerlyScrub {
			return false, &types.InvalidDeviceBacking{InvalidDeviceSpec: types.InvalidDeviceSpec{DeviceIndex: int32(c.index)}}
		}
		if c.flat.ThinProvisioned == nil || !*c.flat.ThinProvisioned {
			c.flat.ThinProvisioned = types.NewBool(true)
			changed = true
		}
	}
	return changed, nil
}
