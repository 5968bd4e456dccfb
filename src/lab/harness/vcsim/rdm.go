package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// RDM support. vcsim 0.24 type-asserts every VirtualDisk backing to a flat backing and panics
// on anything else (virtual_machine.go updateDiskLayouts). Replacing the VirtualMachine in the
// registry with a wrapper breaks the many places that assert Map.Get(ref).(*VirtualMachine)
// (snapshots, guest ops, perf, datacenter destroy), so the VM stays the simulator's own object
// and the request is rewritten on its way in instead:
//  1. existing RDM backings of the VM are swapped for flat ones while the call runs,
//  2. RDM backings in the request become flat backings carrying a marker uuid,
//  3. after the call the marked disks get their RDM backing back, so readers see
//     compatibilityMode/deviceName/lunUuid exactly as a host reports them.

var markerSeq int64

const markerPrefix = "storsweep-rdm-marker-"

type pendingRDM struct {
	marker string
	rdm    *types.VirtualDiskRawDiskMappingVer1BackingInfo
}

func (h *harness) vmLock(id string) *sync.Mutex {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, ok := h.vmLocks[id]
	if !ok {
		l = &sync.Mutex{}
		h.vmLocks[id] = l
	}
	return l
}

func flatFor(b *types.VirtualDiskRawDiskMappingVer1BackingInfo, marker string) *types.VirtualDiskFlatVer2BackingInfo {
	return &types.VirtualDiskFlatVer2BackingInfo{
		VirtualDeviceFileBackingInfo: b.VirtualDeviceFileBackingInfo,
		DiskMode:                     "persistent",
		ThinProvisioned:              types.NewBool(true),
		Uuid:                         marker,
	}
}

func vmHost(vm *simulator.VirtualMachine) *simulator.HostSystem {
	if vm.Runtime.Host == nil {
		return nil
	}
	h, _ := simulator.Map.Get(*vm.Runtime.Host).(*simulator.HostSystem)
	return h
}

// validateRDM applies what hostd checks for a mapping: a known LUN by deviceName, a matching
// lunUuid, a valid compatibility mode, and a LUN that no VMFS volume occupies.
func (h *harness) validateRDM(vm *simulator.VirtualMachine, index int, disk *types.VirtualDisk, b *types.VirtualDiskRawDiskMappingVer1BackingInfo) types.BaseMethodFault {
	invalid := &types.InvalidDeviceBacking{InvalidDeviceSpec: types.InvalidDeviceSpec{DeviceIndex: int32(index)}}
	if b.CompatibilityMode != "physicalMode" && b.CompatibilityMode != "virtualMode" {
		return invalid
	}
	host := vmHost(vm)
	if host == nil {
		return invalid
	}
	lun := findDisk(host, func(d *types.HostScsiDisk) bool {
		return b.DeviceName != "" && (d.DevicePath == b.DeviceName || d.DeviceName == b.DeviceName)
	})
	if lun == nil {
		return invalid
	}
	if b.LunUuid != "" && b.LunUuid != lun.Uuid {
		return invalid
	}
	if _, used := h.storage.inUse(host, lun.CanonicalName); used {
		return invalid
	}
	b.LunUuid = lun.Uuid
	if b.DiskMode == "" {
		// Physical mode bypasses snapshots entirely, which hostd reports as independent.
		b.DiskMode = "persistent"
		if b.CompatibilityMode == "physicalMode" {
			b.DiskMode = "independent_persistent"
		}
	}
	size := lun.Capacity.Block * int64(lun.Capacity.BlockSize)
	disk.CapacityInBytes = size
	disk.CapacityInKB = size / 1024
	return nil
}

// prepareReconfig returns the (possibly rewritten) request body and a completion hook, or a
// fault with which the reconfiguration task must fail.
func (h *harness) prepareReconfig(req *types.ReconfigVM_Task, body []byte) ([]byte, func(bool), types.BaseMethodFault) {
	vm, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachine)
	if !ok || vm.Config == nil {
		return body, nil, nil
	}
	lock := h.vmLock(vm.Self.Value)
	lock.Lock()

	saved := map[int32]*types.VirtualDiskRawDiskMappingVer1BackingInfo{}
	simulator.Map.WithLock(vm, func() {
		for _, d := range vm.Config.Hardware.Device {
			if disk, ok := d.(*types.VirtualDisk); ok {
				if b, ok := disk.Backing.(*types.VirtualDiskRawDiskMappingVer1BackingInfo); ok {
					saved[disk.Key] = b
					disk.Backing = flatFor(b, "")
				}
			}
		}
	})
	restore := func(pending []pendingRDM) {
		simulator.Map.WithLock(vm, func() {
			changed := false
			for _, d := range vm.Config.Hardware.Device {
				disk, ok := d.(*types.VirtualDisk)
				if !ok {
					continue
				}
				flat, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
				if !ok {
					continue
				}
				if strings.HasPrefix(flat.Uuid, markerPrefix) {
					for _, p := range pending {
						if p.marker == flat.Uuid {
							p.rdm.VirtualDeviceFileBackingInfo = flat.VirtualDeviceFileBackingInfo
							p.rdm.Uuid = volumeUUID(p.marker)
							disk.Backing = p.rdm
							changed = true
						}
					}
					continue
				}
				if b, ok := saved[disk.Key]; ok {
					disk.Backing = b
					changed = true
				}
			}
			if changed {
				simulator.Map.Update(vm, []types.PropertyChange{
					{Name: "config.hardware.device", Val: vm.Config.Hardware.Device},
				})
			}
		})
		lock.Unlock()
	}

	var pending []pendingRDM
	rewritten := false
	for i, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		disk, ok := spec.Device.(*types.VirtualDisk)
		if !ok {
			continue
		}
		if spec.Operation == types.VirtualDeviceConfigSpecOperationEdit || spec.Operation == types.VirtualDeviceConfigSpecOperationRemove {
			delete(saved, disk.Key)
		}
		b, isRDM := disk.Backing.(*types.VirtualDiskRawDiskMappingVer1BackingInfo)
		if isRDM {
			if spec.Operation != types.VirtualDeviceConfigSpecOperationRemove {
				if f := h.validateRDM(vm, i, disk, b); f != nil {
					restore(nil)
					return body, nil, f
				}
			}
			marker := fmt.Sprintf("%s%d", markerPrefix, atomic.AddInt64(&markerSeq, 1))
			if spec.Operation != types.VirtualDeviceConfigSpecOperationRemove {
				pending = append(pending, pendingRDM{marker: marker, rdm: b})
			}
			disk.Backing = flatFor(b, marker)
			rewritten = true
			continue
		}
		if flat, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok &&
			spec.Operation == types.VirtualDeviceConfigSpecOperationAdd && spec.FileOperation == "" {
			// Attaching an existing vmdk: a host reports the provisioning recorded in the
			// disk's descriptor, not what the client claims.
			if rec, ok := h.disks.get(flat.FileName); ok {
				flat.ThinProvisioned = types.NewBool(rec.thin)
				flat.EagerlyScrub = types.NewBool(rec.eager)
				rewritten = true
			}
		}
	}
	if rewritten {
		var out bytes.Buffer
		out.WriteString(xml.Header)
		env := soap.Envelope{Body: &methods.ReconfigVM_TaskBody{Req: req}}
		if err := xml.NewEncoder(&out).Encode(&env); err == nil {
			body = out.Bytes()
		}
	}
	removed := destroyedFiles(req)
	return body, func(ok bool) {
		restore(pending)
		if ok {
			h.disks.forget(removed...)
			h.disks.recordVM(vm)
			assignDiskUUIDs(vm)
			if h.guest != nil {
				h.guest.sync(vm, removed)
			}
		}
	}, nil
}

func destroyedFiles(req *types.ReconfigVM_Task) []string {
	var files []string
	for _, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		if spec.Operation != types.VirtualDeviceConfigSpecOperationRemove || spec.FileOperation != types.VirtualDeviceConfigSpecFileOperationDestroy {
			continue
		}
		if disk, ok := spec.Device.(*types.VirtualDisk); ok {
			if b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
				files = append(files, b.GetVirtualDeviceFileBackingInfo().FileName)
			}
		}
	}
	return files
}

// diskRegistry remembers the provisioning type of each vmdk this server created, standing in
// for the descriptor file a real host would read.
type diskRegistry struct {
	mu    sync.Mutex
	disks map[string]diskFlags
}

type diskFlags struct{ thin, eager bool }

func newDiskRegistry() *diskRegistry { return &diskRegistry{disks: map[string]diskFlags{}} }

func normPath(p string) string {
	p = strings.TrimSpace(p)
	if i := strings.Index(p, "]"); i >= 0 {
		return p[:i+1] + " " + strings.TrimSpace(p[i+1:])
	}
	return p
}

func (r *diskRegistry) get(name string) (diskFlags, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.disks[normPath(name)]
	return f, ok
}

func (r *diskRegistry) put(name string, f diskFlags) {
	r.mu.Lock()
	r.disks[normPath(name)] = f
	r.mu.Unlock()
}

func (r *diskRegistry) forget(names ...string) {
	r.mu.Lock()
	for _, n := range names {
		delete(r.disks, normPath(n))
	}
	r.mu.Unlock()
}

// recordVM notes the flags of flat disks the VM uses that are not yet known (e.g. created by
// ReconfigVM add+create, possibly under a generated file name).
func (r *diskRegistry) recordVM(vm *simulator.VirtualMachine) {
	simulator.Map.WithLock(vm, func() {
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			flat, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo)
			if !ok || flat.FileName == "" {
				continue
			}
			if _, known := r.get(flat.FileName); !known {
				r.put(flat.FileName, diskFlags{
					thin:  flat.ThinProvisioned != nil && *flat.ThinProvisioned,
					eager: flat.EagerlyScrub != nil && *flat.EagerlyScrub,
				})
			}
		}
	})
}

// diskManagerHook records CreateVirtualDisk_Task's diskType (vcsim ignores it) and forgets
// deleted disks, once the task has succeeded.
func (h *harness) diskManagerHook(method *simulator.Method) func(bool) {
	return func(ok bool) {
		if !ok {
			return
		}
		switch req := method.Body.(type) {
		case *types.CreateVirtualDisk_Task:
			spec, isFile := req.Spec.(*types.FileBackedVirtualDiskSpec)
			if !isFile {
				return
			}
			f := diskFlags{}
			switch spec.DiskType {
			case string(types.VirtualDiskTypeThin):
				f.thin = true
			case string(types.VirtualDiskTypeEagerZeroedThick):
				f.eager = true
			}
			h.disks.put(req.Name, f)
		case *types.DeleteVirtualDisk_Task:
			h.disks.forget(req.Name)
			if h.guest != nil {
				h.guest.forgetVmdk(req.Name)
			}
		}
	}
}

// failTask answers a *_Task call with a task that ends in error, as hostd does for faults
// found while the task runs.
func failTask(method *simulator.Method, f types.BaseMethodFault, msg string) (types.ManagedObjectReference, bool) {
	obj := simulator.Map.Get(method.This)
	if obj == nil {
		return types.ManagedObjectReference{}, false
	}
	id := strings.TrimSuffix(method.Name, "_Task")
	task := simulator.CreateTask(obj, lcFirst(id)+"Task", func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		return nil, f
	})
	ref := task.Run()
	simulator.Map.WithLock(task, func() {
		if task.Info.Error != nil && msg != "" {
			task.Info.Error.LocalizedMessage = msg
		}
		if _, isEntity := obj.(mo.Entity); !isEntity {
			task.Info.Entity = nil
			task.Info.EntityName = ""
		}
	})
	return ref, true
}
