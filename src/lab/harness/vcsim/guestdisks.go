package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// Guest disks (-guest-disks DIR). A real Linux guest sees each disk attached to its VM as a block
// device, named by udev in /dev/disk/by-id after the WWN the virtual disk reports. The lab's guest
// is this machine, so for every disk a reconfiguration attaches the harness makes a real block
// device: a sparse file of the disk's capacity (DIR/files) attached as a loop device (losetup),
// published as DIR/by-id/wwn-0x<id> → /dev/loopN. The lab cannot run udev, so the guest's by-id
// directory is DIR/by-id (the inventory's guest.byIdDir); that is the one difference from a real
// guest. Removing the disk detaches the loop device and removes the link; a VMDK whose file was
// destroyed loses its image too. A LUN keeps its data while the harness runs (DIR/files/<naa>.img,
// created empty at the LUN's size when first mapped; a test may write it beforehand), as a LUN's
// contents outlive a mapping.
//
// The WWN the guest sees, as on a real host:
//   - a VMDK (and a virtual-mode RDM, which the host virtualizes): only with the VM's
//     disk.EnableUUID = TRUE does the virtual disk answer VPD pages 0x80/0x83; then its serial is
//     the backing's uuid without dashes (6000c29…) and udev names it wwn-0x6000c29…
//     (elatov/elatov.github.io _posts/2012-03-26-missing-links-to-devices-on-linux-vms-under-devdiskby-id.md,
//     citing VMware KB 1029157; deckhouse/deckhouse ee/candi/cloud-providers/vsphere/terraform-modules/
//     master-node/outputs.tf maps a vsphere disk's uuid to /dev/disk/by-id/wwn-0x<uuid without dashes>).
//     Without it the disk appears (a loop device) but with no by-id link;
//   - a physical-mode RDM passes the LUN's own inquiry data through: wwn-0x<the LUN's NAA id>.
// udev's name is wwn-$ID_WWN_WITH_EXTENSION (systemd rules.d/60-persistent-storage.rules).
//
// The link follows udev's rules per controller type (linkName): a disk on a SCSI controller
// (PVSCSI, LSI Logic, LSI Logic SAS, BusLogic) is a SCSI disk and gets wwn-0x<id> as above; a disk
// on a virtual NVMe controller is an NVMe namespace (/dev/nvmeXnY), for which udev makes no wwn-
// link at all: the "# NVMe" block of 60-persistent-storage.rules sets ID_WWN from the namespace's
// sysfs `wwid` and links disk/by-id/nvme-$ID_WWN (and nvme-<model>_<serial>), while the wwn- rule
// needs ID_WWN_WITH_EXTENSION, which only the SCSI/ATA probes set. The kernel's wwid is
// "eui.<NGUID or EUI-64 hex>", "uuid.<UUID>" or "nvme.<vid>-<serial>-<model>-<nsid>" (Linux
// commit 118472ab8532, "NVMe: Expose ns wwid through single sysfs entry"). Which identifier a
// VMware virtual NVMe namespace reports, and whether disk.EnableUUID changes it, is unverified:
// the lab gives it nvme-eui.<the backing uuid's 32 hex> whatever disk.EnableUUID says (an NGUID
// is 16 bytes, as the uuid is). What matters for the toolkit is that no wwn-0x link exists.

// Another identity (POST /_harness/guest-identity {"mode":"other"}, test control). The uuid → WWN
// mapping above is the toolkit's assumption about real hosts, and it is unverified on them ("the hex
// after 6000c29 derives from the VMDK uuid (unverified exact mapping)", real-product-rules §3.4;
// preflight's canary exists to check it on the user's host, issue 29). "other" stands for a host where it
// does not hold: a VMDK (or virtual RDM) attached from then on shows up in the guest as
// wwn-0x6000c29<the first 25 hex of sha256(its uuid hex)> — a VMware-prefixed id, stable per disk,
// that is not the one its backing uuid implies. A physical RDM keeps its LUN's NAA id (passed
// through), an NVMe namespace its nvme-eui link; disks attached before keep their link. "uuid" (the
// default, and after reset) is the mapping above.
var presented = struct {
	sync.Mutex
	mode string
}{mode: "uuid"}

func setGuestIdentity(mode string) error {
	if mode != "uuid" && mode != "other" {
		return fmt.Errorf("/_harness/guest-identity: \"mode\" must be \"uuid\" or \"other\", got %q", mode)
	}
	presented.Lock()
	presented.mode = mode
	presented.Unlock()
	return nil
}

// presentedWwn is the WWN the guest sees for a disk whose backing uuid (without dashes) is hex.
func presentedWwn(hex32 string) string {
	presented.Lock()
	mode := presented.mode
	presented.Unlock()
	if mode != "other" {
		return hex32
	}
	sum := sha256.Sum256([]byte(hex32))
	return "6000c29" + hex.EncodeToString(sum[:])[:25]
}

type guestDisk struct {
	vm, file, loop, link string
	// the image of a VMDK goes with the VMDK; a LUN's image stays for the next mapping
	vmdk string
}

type guestDisks struct {
	dir string
	mu  sync.Mutex
	// by VM MoRef value + "/" + device key
	attached map[string]*guestDisk
	// the disks the simulated VMs had at start: the lab guest's own system disk is this machine's
	ignored map[string]bool
	// the Linux lab guest user of each VM with guest operations (VM MoRef value → uid): it, and
	// no other account, may open the loop devices of that VM's disks (setOwners)
	owners map[string]int
}

func newGuestDisks(dir string) (*guestDisks, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{filepath.Join(abs, "by-id"), filepath.Join(abs, "files")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("-guest-disks: %w", err)
		}
	}
	// Said at start, not at the first attach: without loop devices the lab has no guest disks.
	if out, err := exec.Command("losetup", "-f").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("-guest-disks: loop devices are unavailable (losetup -f: %s%v); the lab's guest disks need root, util-linux's losetup and /dev/loop-control", strings.TrimSpace(string(out))+" ", err)
	}
	return &guestDisks{dir: abs, attached: map[string]*guestDisk{}, ignored: map[string]bool{}}, nil
}

// ignoreExisting leaves the disks the VMs have at start out of the guest: they stand for the
// guest's own disks (its system disk is this machine's), not disks a run attaches.
func (g *guestDisks) ignoreExisting() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, obj := range simulator.Map.All("VirtualMachine") {
		if vm, ok := obj.(*simulator.VirtualMachine); ok && vm.Config != nil {
			for _, v := range disksOf(vm) {
				g.ignored[v.key] = true
			}
		}
	}
}

// newDiskUUID is a backing uuid as ESXi assigns one: VMware's OUI-based prefix 6000C29 and random
// hex, in the 8-4-4-4-12 form the API reports.
func newDiskUUID() string {
	b := make([]byte, 13)
	_, _ = rand.Read(b)
	x := "6000C29" + strings.ToLower(hex.EncodeToString(b))[:25]
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// assignDiskUUIDs gives every flat disk of the VM without one a uuid, as a host does for each
// disk it creates (vcsim leaves VirtualDiskFlatVer2BackingInfo.uuid empty).
func assignDiskUUIDs(vm *simulator.VirtualMachine) {
	simulator.Map.WithLock(vm, func() {
		changed := false
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			if b, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok && b.Uuid == "" {
				b.Uuid = newDiskUUID()
				changed = true
			}
		}
		if changed {
			simulator.Map.Update(vm, []types.PropertyChange{{Name: "config.hardware.device", Val: vm.Config.Hardware.Device}})
		}
	})
}

// diskUUIDEnabled reads the VM's disk.EnableUUID (the last value set wins): TRUE in any case, or 1,
// the form the Kubernetes vSphere Cloud Provider docs set (govc vm.change -e="disk.enableUUID=1",
// kubernetes/website PR #2989) and clusters run with.
func diskUUIDEnabled(vm *simulator.VirtualMachine) bool {
	on := false
	for _, o := range vm.Config.ExtraConfig {
		v := o.GetOptionValue()
		if strings.EqualFold(v.Key, "disk.EnableUUID") {
			s, _ := v.Value.(string)
			on = strings.EqualFold(strings.TrimSpace(s), "TRUE") || strings.TrimSpace(s) == "1"
		}
	}
	return on
}

type diskView struct {
	key       string
	wwn, vmdk string
	lun       string
	size      int64
	// on a virtual NVMe controller: the namespace's id (nvme-eui.<nvme>), and no wwn
	nvme string
}

// linkName is the by-id name udev gives the disk (see the top of this file), "" for none.
func (v diskView) linkName() string {
	if v.nvme != "" {
		return "nvme-eui." + v.nvme
	}
	if v.wwn != "" {
		return "wwn-0x" + v.wwn
	}
	return ""
}

// disksOf lists the VM's disks as the guest would see them.
func disksOf(vm *simulator.VirtualMachine) []diskView {
	var out []diskView
	simulator.Map.WithLock(vm, func() {
		enabled := diskUUIDEnabled(vm)
		nvmeKeys := map[int32]bool{}
		for _, d := range vm.Config.Hardware.Device {
			if c, ok := d.(*types.VirtualNVMEController); ok {
				nvmeKeys[c.Key] = true
			}
		}
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			size := disk.CapacityInBytes
			if size == 0 {
				size = disk.CapacityInKB * 1024
			}
			v := diskView{key: fmt.Sprintf("%s/%d", vm.Self.Value, disk.Key), size: size}
			switch b := disk.Backing.(type) {
			case *types.VirtualDiskFlatVer2BackingInfo:
				if strings.HasPrefix(b.Uuid, markerPrefix) {
					continue // an RDM while the harness rewrites it (rdm.go)
				}
				v.vmdk = b.FileName
				if enabled {
					v.wwn = presentedWwn(strings.ToLower(strings.ReplaceAll(b.Uuid, "-", "")))
				}
			case *types.VirtualDiskRawDiskMappingVer1BackingInfo:
				v.lun = strings.TrimPrefix(filepath.Base(b.DeviceName), "naa.")
				if b.CompatibilityMode == "physicalMode" {
					v.wwn = v.lun
				} else if enabled {
					v.wwn = presentedWwn(strings.ToLower(strings.ReplaceAll(b.Uuid, "-", "")))
				}
			default:
				continue
			}
			if nvmeKeys[disk.ControllerKey] {
				v.nvme = v.lun
				if b, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok {
					v.nvme = strings.ToLower(strings.ReplaceAll(b.Uuid, "-", ""))
				}
				v.wwn = ""
			}
			out = append(out, v)
		}
	})
	return out
}

func (g *guestDisks) imageOf(v diskView) string {
	if v.lun != "" {
		return filepath.Join(g.dir, "files", "naa."+v.lun+".img")
	}
	sum := strings.NewReplacer("[", "", "]", "", " ", "_", "/", "_").Replace(normPath(v.vmdk))
	return filepath.Join(g.dir, "files", sum+".img")
}

// sync makes the guest's devices match the VM's disks after a successful reconfiguration;
// destroyed lists the VMDK files the reconfiguration deleted.
func (g *guestDisks) sync(vm *simulator.VirtualMachine, destroyed []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	present := map[string]diskView{}
	for _, v := range disksOf(vm) {
		present[v.key] = v
	}
	gone := map[string]bool{}
	for _, f := range destroyed {
		gone[normPath(f)] = true
	}
	for key, a := range g.attached {
		if a.vm != vm.Self.Value {
			continue
		}
		if _, ok := present[key]; ok {
			continue
		}
		g.detach(a)
		if a.vmdk != "" && gone[normPath(a.vmdk)] {
			_ = os.Remove(a.file)
		}
		delete(g.attached, key)
	}
	for key, v := range present {
		if _, ok := g.attached[key]; ok || v.size <= 0 || g.ignored[key] {
			continue
		}
		a, err := g.attach(vm.Self.Value, v)
		if err != nil {
			log.Printf("guest disk for %s: %v", key, err)
			continue
		}
		g.attached[key] = a
	}
}

func (g *guestDisks) attach(vm string, v diskView) (*guestDisk, error) {
	file := g.imageOf(v)
	if _, err := os.Stat(file); os.IsNotExist(err) {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		// sparse: a new disk reads zeros, as a thin or lazy-zeroed VMDK does
		err = f.Truncate(v.size)
		_ = f.Close()
		if err != nil {
			return nil, err
		}
	}
	// -P: the kernel reads its partition table, as it does a real disk's
	out, err := exec.Command("losetup", "-f", "-P", "--show", file).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("losetup -f -P --show %s: %s (%v)", file, strings.TrimSpace(string(out)), err)
	}
	a := &guestDisk{vm: vm, file: file, loop: strings.TrimSpace(string(out))}
	udevOwnership(a.loop)
	if uid, ok := g.owners[vm]; ok {
		grantDevice(a.loop, uid)
	}
	if v.lun == "" {
		a.vmdk = v.vmdk
	}
	if name := v.linkName(); name != "" {
		a.link = filepath.Join(g.dir, "by-id", name)
		_ = os.Remove(a.link)
		if err := os.Symlink(a.loop, a.link); err != nil {
			g.detach(a)
			return nil, err
		}
	}
	return a, nil
}

// udevOwnership gives a block device the owner and mode udev gives every disk in a real guest
// (systemd rules.d/50-udev-default.rules: SUBSYSTEM=="block", GROUP="disk", and MODE 0660 from
// udev's default for devices with a group): the lab has no udev, so losetup leaves root 0600.
// Its partitions (losetup -P) get the same.
func udevOwnership(dev string) {
	for _, d := range deviceNodes(dev) {
		_ = os.Chown(d, 0, diskGID())
		_ = os.Chmod(d, 0o660)
	}
}

// grantDevice lets the VM's Linux lab guest user (only it) open one of that VM's disks: the lab's
// guests share this machine, so group disk would open every lab's loop devices and the host's own
// disks, where a real guest sees only its own virtual disks. The device node is owned by the guest
// user (root:disk 0660 otherwise); detach gives it back to root before the loop device is freed.
func grantDevice(dev string, uid int) {
	for _, d := range deviceNodes(dev) {
		_ = os.Chown(d, uid, diskGID())
		_ = os.Chmod(d, 0o660)
	}
}

// deviceNodes is the loop device and the partitions the kernel made for it (/dev/loopNpM).
func deviceNodes(dev string) []string {
	parts, _ := filepath.Glob(dev + "p[0-9]*")
	return append([]string{dev}, parts...)
}

func diskGID() int {
	if grp, err := user.LookupGroup("disk"); err == nil {
		if gid, err := strconv.Atoi(grp.Gid); err == nil {
			return gid
		}
	}
	return 0
}

// setOwners records each guest-operations VM's Linux guest user (VM MoRef value → uid) and gives
// it the disks already attached to its VM.
func (g *guestDisks) setOwners(owners map[string]int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owners = owners
	for _, a := range g.attached {
		if uid, ok := owners[a.vm]; ok {
			grantDevice(a.loop, uid)
		}
	}
}

func (g *guestDisks) detach(a *guestDisk) {
	if a.link != "" {
		_ = os.Remove(a.link)
	}
	// the node outlives the loop device: the next user of loopN (another lab) must not find it
	// still open to this VM's guest user
	udevOwnership(a.loop)
	// partitions the guest added (partx -a) go with the loop device
	_ = exec.Command("partx", "-d", a.loop).Run()
	if out, err := exec.Command("losetup", "-d", a.loop).CombinedOutput(); err != nil {
		log.Printf("losetup -d %s: %s (%v)", a.loop, strings.TrimSpace(string(out)), err)
	}
}

// devices maps each attached disk (VM MoRef value + "/" + device key) to its loop device.
func (g *guestDisks) devices() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]string{}
	for key, a := range g.attached {
		out[key] = a.loop
	}
	return out
}

// forgetVmdk removes the image of a VMDK deleted by DeleteVirtualDisk_Task (when not attached).
func (g *guestDisks) forgetVmdk(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, a := range g.attached {
		if a.vmdk != "" && normPath(a.vmdk) == normPath(name) {
			return
		}
	}
	_ = os.Remove(g.imageOf(diskView{vmdk: name}))
}

// close detaches every loop device and removes every image and link the harness made.
func (g *guestDisks) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for key, a := range g.attached {
		g.detach(a)
		delete(g.attached, key)
	}
	_ = os.RemoveAll(filepath.Join(g.dir, "files"))
	_ = os.RemoveAll(filepath.Join(g.dir, "by-id"))
}

// enableDiskUUIDOnAll sets disk.EnableUUID = TRUE on every simulated VM: the lab's VMs stand for
// benchmark guests prepared as the docs ask (the option takes effect at power-on, so a real
// guest is prepared before it runs).
func enableDiskUUIDOnAll() {
	for _, obj := range simulator.Map.All("VirtualMachine") {
		vm, ok := obj.(*simulator.VirtualMachine)
		if !ok || vm.Config == nil {
			continue
		}
		simulator.Map.WithLock(vm, func() {
			vm.Config.ExtraConfig = append(vm.Config.ExtraConfig, &types.OptionValue{Key: "disk.EnableUUID", Value: "TRUE"})
		})
	}
}
