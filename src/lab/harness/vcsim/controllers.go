package main

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Storage controller and unit-number rules a real host enforces on ReconfigVM_Task, which vcsim
// 0.24 does not (it accepts unit 7 on SCSI and any bus number):
//
//   - "You can add up to four SCSI controllers, four SATA controllers and four NVMe controllers to a
//     virtual machine"; SCSI nodes z:0–z:15, the controller itself on z:7; with hardware version 14
//     a PVSCSI controller supports 64 targets; NVMe needs hardware version 13 (ESXi 6.5) and takes
//     15 namespaces (0–14) per controller [VMware vSphere 6.5/6.7/8.0 Virtual Machine Administration:
//     "SCSI, SATA, and NVMe Storage Controller Conditions, Limitations, and Compatibility" and "Add an
//     NVMe Controller"; community.vmware plugins/modules/vmware_guest_disk.py `unit_number`].
//   - A device the VM's hardware version does not support: DeviceUnsupportedForVmVersion
//     {currentVersion, expectedVersion} (vSphere API reference, fault of ReconfigVM_Task).
//   - Anything else about a device spec the host cannot honour: InvalidDeviceSpec{deviceIndex}
//     (vSphere API reference: "InvalidDeviceSpec: if the device configuration is invalid"); the
//     exact fault a host gives for unit 7 or a fifth controller is not documented.
//   - A disk at a controller:unit another device already holds, whatever its type: a host gives
//     InvalidDeviceSpec ("Invalid configuration for device '0'." for a new disk "added to a
//     populated slot on the scsi controller": ManageIQ pull request 8791, Red Hat bugzilla
//     1336812; a unit number must not "conflict with another device": govmomi maintainer in
//     vm-operator pull request 622); vcsim 0.24 (virtual_machine.go configureDevices) refuses it
//     only when the holder is of the same type (devices.SelectByType), so a disk on the unit of a
//     CD-ROM went through.
//   - A disk whose controllerKey names no controller of the VM: InvalidController{controllerKey},
//     a subtype of InvalidDeviceSpec ("An InvalidController exception is thrown if a device refers
//     to a controller that cannot be found. For example, … if the client incorrectly passes a
//     controller key", vSphere Web Services API, vim.fault.InvalidController; a host's text:
//     "The device '2' is referring to a nonexisting controller '1,000'.", pyvmomi issue 345).
//   - A device the spec removes frees its unit only for the adds listed after the remove: vcsim
//     0.24 configureDevices applies deviceChange in order, and no vSphere source says a host
//     reorders it (the stricter reading; storsweep never sends a remove and an add in one spec).

var scsiTypes = map[string]bool{
	"ParaVirtualSCSIController":    true,
	"VirtualLsiLogicController":    true,
	"VirtualLsiLogicSASController": true,
	"VirtualBusLogicController":    true,
	"VirtualSCSIController":        true,
}

// deviceType is the vim25 type name of a device, e.g. ParaVirtualSCSIController.
func deviceType(d types.BaseVirtualDevice) string {
	t := reflect.TypeOf(d)
	if t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	return t.Name()
}

// controllerClass groups controllers that share bus numbering and the four-per-VM limit.
func controllerClass(t string) string {
	switch {
	case scsiTypes[t]:
		return "scsi"
	case t == "VirtualNVMEController":
		return "nvme"
	case t == "VirtualAHCIController" || t == "VirtualSATAController":
		return "sata"
	}
	return ""
}

// releaseHardwareVersion is the hardware version a VM created on that ESXi release gets by default
// (its newest): 5.5 → 10, 6.0 → 11, 6.5 → 13, 6.7 → 14, 7.0 → 17, 8.0 → 20 [vSphere Automation API
// "Vm_Hardware_Upgrade" hardware version enum; VMware KB 1003746 "Virtual machine hardware versions";
// real-product-rules.md §3.1]. The simulated VMs take it from the version profile (version.go), so
// PVSCSI's 64 targets (HW 14) and NVMe (HW 13) follow the release.
func releaseHardwareVersion(major, minor int) int {
	switch {
	case major >= 8:
		return 20
	case major == 7:
		return 17
	case major == 6 && minor >= 7:
		return 14
	case major == 6 && minor >= 5:
		return 13
	case major == 6:
		return 11
	}
	return 10
}

func setVmHardwareVersions(major, minor int) {
	v := "vmx-" + strconv.Itoa(releaseHardwareVersion(major, minor))
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm, ok := e.(*simulator.VirtualMachine)
		if !ok || vm.Config == nil {
			continue
		}
		simulator.Map.WithLock(vm, func() {
			simulator.Map.Update(vm, []types.PropertyChange{{Name: "config.version", Val: v}})
		})
	}
}

func vmHardwareVersion(vm *simulator.VirtualMachine) int {
	v, err := strconv.Atoi(strings.TrimPrefix(vm.Config.Version, "vmx-"))
	if err != nil {
		return 0
	}
	return v
}

// unitLimit: units [0, end) a disk may take on a controller of type t, and the reserved one (-1: none).
func unitLimit(t string, c types.BaseVirtualDevice, hw int) (int32, int32) {
	switch {
	case scsiTypes[t]:
		reserved := int32(7)
		if s, ok := c.(types.BaseVirtualSCSIController); ok && s.GetVirtualSCSIController().ScsiCtlrUnitNumber != 0 {
			reserved = s.GetVirtualSCSIController().ScsiCtlrUnitNumber
		}
		if t == "ParaVirtualSCSIController" && hw >= 14 {
			return 64, reserved
		}
		return 16, reserved
	case t == "VirtualNVMEController":
		return 15, -1
	case t == "VirtualAHCIController" || t == "VirtualSATAController":
		return 30, -1
	case t == "VirtualIDEController":
		return 2, -1
	}
	return 16, -1
}

func controllerRules(vm *simulator.VirtualMachine, req *types.ReconfigVM_Task) (bool, types.BaseMethodFault) {
	hw := vmHardwareVersion(vm)
	devices := append([]types.BaseVirtualDevice{}, vm.Config.Hardware.Device...)
	for i, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		invalid := &types.InvalidDeviceSpec{DeviceIndex: int32(i)}
		if spec.Operation == types.VirtualDeviceConfigSpecOperationRemove {
			// frees its unit for the adds after it, in order (vcsim's configureDevices)
			key := spec.Device.GetVirtualDevice().Key
			kept := devices[:0:0]
			for _, d := range devices {
				if d.GetVirtualDevice().Key != key {
					kept = append(kept, d)
				}
			}
			devices = kept
			continue
		}
		if spec.Operation != types.VirtualDeviceConfigSpecOperationAdd {
			continue
		}
		t := deviceType(spec.Device)
		if class := controllerClass(t); class != "" {
			if class == "nvme" && hw < 13 {
				return false, &types.DeviceUnsupportedForVmVersion{
					InvalidDeviceSpec: *invalid,
					CurrentVersion:    vm.Config.Version,
					ExpectedVersion:   "vmx-13",
				}
			}
			bus := spec.Device.(types.BaseVirtualController).GetVirtualController().BusNumber
			if bus < 0 || bus > 3 {
				return false, invalid
			}
			n := 0
			for _, d := range devices {
				if controllerClass(deviceType(d)) != class {
					continue
				}
				n++
				if d.(types.BaseVirtualController).GetVirtualController().BusNumber == bus {
					return false, invalid
				}
			}
			if n >= 4 {
				return false, invalid
			}
			devices = append(devices, spec.Device)
			continue
		}
		if _, isDisk := spec.Device.(*types.VirtualDisk); !isDisk {
			continue
		}
		d := spec.Device.GetVirtualDevice()
		if d.UnitNumber == nil {
			continue // vcsim answers that itself (InvalidDeviceSpec for a created disk)
		}
		var ctl types.BaseVirtualDevice
		for _, c := range devices {
			if c.GetVirtualDevice().Key == d.ControllerKey {
				ctl = c
			}
		}
		if ctl == nil {
			return false, &types.InvalidController{InvalidDeviceSpec: *invalid, ControllerKey: d.ControllerKey}
		}
		end, reserved := unitLimit(deviceType(ctl), ctl, hw)
		if *d.UnitNumber < 0 || *d.UnitNumber >= end || *d.UnitNumber == reserved {
			return false, invalid
		}
		for _, o := range devices {
			od := o.GetVirtualDevice()
			if od.ControllerKey == d.ControllerKey && od.UnitNumber != nil && *od.UnitNumber == *d.UnitNumber {
				return false, invalid
			}
		}
		devices = append(devices, spec.Device)
	}
	return false, nil
}
