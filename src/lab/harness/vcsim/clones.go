package main

// Clones of lab VMs (CloneVM_Task) made real enough to measure (issue 32, vm.count). govmomi 0.24's
// simulator implements CloneVM_Task (simulator/virtual_machine.go CloneVMTask); the harness adds
// what a real clone has and the simulator leaves out:
//   - the source's configuration parameters: a clone is made from the source's .vmx, so its
//     extraConfig (disk.EnableUUID among them) is the source's, merged with the spec's
//     (vSphere Web Services API reference, vim.vm.CloneSpec.config: "an optional specification of
//     changes to the virtual hardware"; the rest is the source's);
//   - a source left untouched: the simulator empties the backing file names of the source's own
//     disk objects and hands those very objects to the clone; the harness gives the source copies
//     made before the call, so the clone's devices are its own;
//   - a guest of its own when the source has one (guestops.go): its own guest-operations account
//     (accountName of the clone's name: its own uid, sudoers as the source's), its own scratch
//     directory, seen by its programs at the source's scratch path (a clone's disk is a copy of the
//     source's, so every path the source's guest has, the clone's has: a bind mount in a mount
//     namespace of the clone's programs); its own loop devices for the disks later attached to it
//     (guestdisks.go, owned by its account); its copied system disk is the guest's own, never a loop
//     device. The login credentials are the source's (the guest's accounts are on the copied disk).
//   - a powered-off VM runs nothing: PowerOffVM_Task ends every process of its guest.
// Destroy_Task of a clone removes all of it: loop devices, account, sudoers drop-in, scratch
// directory. Faults are the simulator's (DuplicateName from CreateVM; Destroy_Task of a powered-on
// VM: InvalidPowerState, vim.ManagedEntity.destroy).

import (
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// command runs name as the guest's account; a clone's programs see its own scratch directory at
// the source's path (unshare(1) gives them a private mount namespace; setpriv(1) drops to the
// account after the bind mount; both exec, so the pid is the program's).
func (gv *guestVM) command(name string, args ...string) *exec.Cmd {
	if gv.hostRoot == "" {
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(gv.uid), Gid: uint32(gv.gid), Groups: gv.group}}
		return cmd
	}
	groups := "--clear-groups"
	if len(gv.group) > 0 {
		ids := make([]string, len(gv.group))
		for i, g := range gv.group {
			ids[i] = strconv.Itoa(int(g))
		}
		groups = "--groups=" + strings.Join(ids, ",")
	}
	// the working directory is entered again once the mount is made (it may be under the source's path)
	script := `mount --bind -- "$1" "$2" || exit 126
u=$3 g=$4 gr=$5
shift 5
cd -- "$(pwd)" 2>/dev/null
exec setpriv --reuid="$u" --regid="$g" "$gr" -- "$@"`
	argv := append([]string{"--mount", "--", "/bin/sh", "-c", script, "sh", gv.hostRoot, gv.root, strconv.Itoa(gv.uid), strconv.Itoa(gv.gid), groups, name}, args...)
	cmd := exec.Command("unshare", argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	return cmd
}

// hostPath is where a Linux guest's path is on this machine, for what the harness itself reads as
// root: a clone's paths under the source's scratch directory are in its own.
func (gv *guestVM) hostPath(p string) string {
	if gv.hostRoot != "" && (p == gv.root || strings.HasPrefix(p, gv.root+"/")) {
		return gv.hostRoot + strings.TrimPrefix(p, gv.root)
	}
	return p
}

// copyDevices: a shallow copy of each device (a disk's flat backing copied too), for the source.
func copyDevices(devs []types.BaseVirtualDevice) []types.BaseVirtualDevice {
	out := make([]types.BaseVirtualDevice, len(devs))
	for i, d := range devs {
		v := reflect.ValueOf(d).Elem()
		c := reflect.New(v.Type())
		c.Elem().Set(v)
		nd := c.Interface().(types.BaseVirtualDevice)
		if disk, ok := nd.(*types.VirtualDisk); ok {
			if b, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok {
				bb := *b
				disk.Backing = &bb
			}
		}
		out[i] = nd
	}
	return out
}

// cloneHook: before the call, the source's devices as they are; after a successful clone, the
// source gets them back and the clone its configuration parameters and (if the source has one) guest.
func (h *harness) cloneHook(method *simulator.Method) func(ok bool) {
	req, ok := method.Body.(*types.CloneVM_Task)
	src, isVM := simulator.Map.Get(method.This).(*simulator.VirtualMachine)
	if !ok || !isVM {
		return nil
	}
	var saved []types.BaseVirtualDevice
	var extra []types.BaseOptionValue
	simulator.Map.WithLock(src, func() {
		saved = copyDevices(src.Config.Hardware.Device)
		extra = append(extra, src.Config.ExtraConfig...)
	})
	return func(ok bool) {
		simulator.Map.WithLock(src, func() {
			src.Config.Hardware.Device = saved
			simulator.Map.Update(src, []types.PropertyChange{{Name: "config.hardware.device", Val: src.Config.Hardware.Device}})
		})
		if !ok {
			return
		}
		clone := findVM(req.Name)
		if clone == nil {
			return
		}
		simulator.Map.WithLock(clone, func() {
			have := map[string]bool{}
			for _, o := range clone.Config.ExtraConfig {
				have[strings.ToLower(o.GetOptionValue().Key)] = true
			}
			for _, o := range extra {
				if !have[strings.ToLower(o.GetOptionValue().Key)] {
					clone.Config.ExtraConfig = append(clone.Config.ExtraConfig, o)
				}
			}
		})
		linkClone(req, clone) // a linked clone's disks are child disks (linked_clones.go)
		if h.guest != nil {
			h.guest.ignoreVM(clone)
		}
		if h.guestOps != nil {
			if err := h.guestOps.addClone(src, clone); err != nil {
				log.Printf("clone %s of %s: no lab guest: %v", req.Name, src.Name, err)
			}
		}
	}
}

// destroyHook: after a VM is destroyed, its loop devices and (a clone's) guest go with it.
func (h *harness) destroyHook(method *simulator.Method) func(ok bool) {
	ref := method.This
	if ref.Type != "VirtualMachine" {
		return nil
	}
	return func(ok bool) {
		if !ok {
			return
		}
		if h.guest != nil {
			h.guest.dropVM(ref.Value)
		}
		if h.guestOps != nil {
			h.guestOps.removeClone(ref)
		}
	}
}

// addClone gives a clone of a configured Linux lab guest a guest of its own (see the top of this file).
func (g *guestOps) addClone(src, clone *simulator.VirtualMachine) error {
	g.mu.Lock()
	from := g.vms[src.Self.Value]
	g.mu.Unlock()
	if from == nil {
		return nil // the source has no lab guest: neither has its clone
	}
	if from.windows() {
		return fmt.Errorf("clones of a Windows lab guest are not modelled")
	}
	cfg := from.cfg
	cfg.VM = clone.Name
	gv := &guestVM{cfg: cfg, ref: clone.Self, root: from.root, hostRoot: filepath.Join(g.root, clone.Name), tools: true, initial: map[string]bool{}}
	for _, d := range disksOf(clone) {
		gv.initial[d.key] = true
	}
	if err := gv.ensureLinuxUser(g.root); err != nil {
		return err
	}
	g.mu.Lock()
	g.vms[clone.Self.Value] = gv
	g.mu.Unlock()
	var err error
	if cfg.Sudo {
		if gv.sudoers, err = ensureSudoers(gv.account); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(gv.hostRoot, 0o700); err != nil {
		return err
	}
	if err := os.Chown(gv.hostRoot, gv.uid, gv.gid); err != nil {
		return err
	}
	if g.guestDisks != nil {
		g.guestDisks.setOwners(g.diskOwners())
	}
	gv.publishTools(clone)
	return nil
}

// removeClone: a destroyed clone's guest — its processes, account, sudoers drop-in and scratch directory.
func (g *guestOps) removeClone(ref types.ManagedObjectReference) {
	g.mu.Lock()
	gv := g.vms[ref.Value]
	if gv != nil && gv.hostRoot != "" {
		delete(g.vms, ref.Value)
	}
	g.mu.Unlock()
	if gv == nil || gv.hostRoot == "" {
		return
	}
	g.stopGuest(gv)
	g.removeAccount(gv)
	_ = os.RemoveAll(gv.hostRoot)
	if g.guestDisks != nil {
		g.guestDisks.setOwners(g.diskOwners())
	}
}

// stopGuest ends every process of a Linux guest (its account's: the account is that guest's alone).
func (g *guestOps) stopGuest(gv *guestVM) {
	if gv.windows() || gv.uid == 0 {
		return
	}
	for _, pid := range processesOfUID(gv.uid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// ignoreVM leaves a clone's copied disks out of the guest (its system disk is the guest's own).
func (g *guestDisks) ignoreVM(vm *simulator.VirtualMachine) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, v := range disksOf(vm) {
		g.ignored[v.key] = true
	}
}

// dropVM detaches the loop devices of a destroyed VM's disks; a VMDK's image goes with the VM.
func (g *guestDisks) dropVM(ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for key, a := range g.attached {
		if a.vm != ref {
			continue
		}
		g.detach(a)
		if a.vmdk != "" {
			_ = os.Remove(a.file)
		}
		delete(g.attached, key)
	}
}
