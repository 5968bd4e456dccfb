package main

// The Windows lab guest (a configured VM whose guestId is windows*). Windows cannot run here, so
// the guest's file system is a directory per VM (<root>/<vm>/fs/<drive letter>/…, looked up
// case-insensitively as NTFS names are) and its programs are the Windows stand-ins
// (src/lab/harness/windows/vsphere_guest.py): cmd.exe (/c with > and 2>&1 redirection) and
// diskspd.exe (diskspd_standin.py, on the VM's disks as the guest numbers them). A program path
// must exist in the guest (else FileNotFound) and be one of those (else the stand-in exits 1).

import (
	"encoding/json"
	"fmt"
	"io/ioutil"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

var winPathRE = regexp.MustCompile(`^([A-Za-z]):[\\/](.*)$`)

// windowsPath maps an absolute guest path (C:\a\b) into the VM's guest directory, resolving
// each existing component case-insensitively. "..", "." and empty components are dropped at
// the root, so nothing outside the guest is reachable.
func (gv *guestVM) windowsPath(p string) (string, error) {
	m := winPathRE.FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("not an absolute Windows path: %q", p)
	}
	cur := filepath.Join(gv.root, "fs", strings.ToUpper(m[1]))
	var parts []string
	for _, c := range strings.FieldsFunc(m[2], func(r rune) bool { return r == '\\' || r == '/' }) {
		switch c {
		case ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			if strings.ContainsAny(c, `<>:"|?*`) || strings.ContainsRune(c, 0) {
				return "", fmt.Errorf("invalid Windows path component %q", c)
			}
			parts = append(parts, c)
		}
	}
	for _, c := range parts {
		next := filepath.Join(cur, c)
		if _, err := os.Lstat(next); err != nil {
			if entries, err := ioutil.ReadDir(cur); err == nil {
				for _, e := range entries {
					if strings.EqualFold(e.Name(), c) {
						next = filepath.Join(cur, e.Name())
						break
					}
				}
			}
		}
		cur = next
	}
	return cur, nil
}

func (gv *guestVM) windowsTarget(p string, overwrite bool) (string, types.BaseMethodFault) {
	hp, err := gv.windowsPath(p)
	if err != nil {
		return "", &types.InvalidArgument{InvalidProperty: "guestFilePath"}
	}
	ff := types.FileFault{File: p}
	if st, err := os.Stat(filepath.Dir(hp)); err != nil || !st.IsDir() {
		return "", &types.FileNotFound{FileFault: ff}
	}
	if st, err := os.Stat(hp); err == nil {
		if st.IsDir() {
			return "", &types.NotAFile{FileFault: ff}
		}
		if !overwrite {
			return "", &types.FileAlreadyExists{FileFault: ff}
		}
	}
	return hp, nil
}

// seedWindows lays out the guest's system: cmd.exe, diskspd.exe, the user's profile and temp.
func (gv *guestVM) seedWindows() error {
	user := gv.cfg.Username
	if i := strings.LastIndexByte(user, '\\'); i >= 0 {
		user = user[i+1:]
	}
	for _, dir := range []string{`C:\Windows\System32`, `C:\Users\` + user + `\AppData\Local\Temp`} {
		hp, err := gv.windowsPath(dir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(hp, 0o755); err != nil {
			return err
		}
	}
	for _, exe := range []string{`C:\Windows\System32\cmd.exe`, `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe`, gv.cfg.DiskspdPath} {
		hp, err := gv.windowsPath(exe)
		if err != nil {
			return fmt.Errorf("diskspdPath %q: %v", exe, err)
		}
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			return err
		}
		if err := ioutil.WriteFile(hp, []byte("MZ stand-in: src/lab/harness/windows/vsphere_guest.py runs this program\n"), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func (gv *guestVM) windowsHome() string {
	user := gv.cfg.Username
	if i := strings.LastIndexByte(user, '\\'); i >= 0 {
		user = user[i+1:]
	}
	return `C:\Users\` + user
}

type winDisk struct {
	AtStart bool   `json:"atStart"`
	Slot    string `json:"slot"`
	Size    int64  `json:"size"`
	Serial  string `json:"serial"`
	Device  string `json:"device,omitempty"`
}

// windowsModel writes the VM's disks, as its guest sees them, for the stand-in: the controller
// slot (SCSI:bus:unit), capacity, the serial the guest reads (disk.EnableUUID: the backing uuid)
// and, with -guest-disks, the loop device holding the disk's data.
func (g *guestOps) windowsModel(gv *guestVM, guestDisksDev map[string]string) (string, error) {
	vm, ok := simulator.Map.Get(gv.ref).(*simulator.VirtualMachine)
	if !ok {
		return "", fmt.Errorf("VM gone")
	}
	var disks []winDisk
	simulator.Map.WithLock(vm, func() {
		enabled := diskUUIDEnabled(vm)
		ctrl := map[int32]types.BaseVirtualDevice{}
		for _, d := range vm.Config.Hardware.Device {
			ctrl[d.GetVirtualDevice().Key] = d
		}
		for _, d := range vm.Config.Hardware.Device {
			disk, ok := d.(*types.VirtualDisk)
			if !ok {
				continue
			}
			bus := int32(0)
			kind := "SCSI"
			if c, ok := ctrl[disk.ControllerKey]; ok {
				switch c.(type) {
				case types.BaseVirtualSCSIController:
					bus = c.(types.BaseVirtualSCSIController).GetVirtualSCSIController().BusNumber
				case *types.VirtualNVMEController:
					kind, bus = "NVMe", c.(*types.VirtualNVMEController).BusNumber
				case *types.VirtualAHCIController:
					kind, bus = "SATA", c.(*types.VirtualAHCIController).BusNumber
				case *types.VirtualIDEController:
					kind, bus = "IDE", c.(*types.VirtualIDEController).BusNumber
				}
			}
			unit := int32(0)
			if disk.UnitNumber != nil {
				unit = *disk.UnitNumber
			}
			size := disk.CapacityInBytes
			if size == 0 {
				size = disk.CapacityInKB * 1024
			}
			// the identity the guest reads, as for a Linux guest (guestdisks.go): a VMDK's (and a
			// virtual RDM's) uuid only with disk.EnableUUID = TRUE, a physical RDM's LUN NAA id
			serial := ""
			if b, ok := disk.Backing.(*types.VirtualDiskFlatVer2BackingInfo); ok && enabled && !strings.HasPrefix(b.Uuid, markerPrefix) {
				serial = strings.ToLower(strings.ReplaceAll(b.Uuid, "-", ""))
			}
			if b, ok := disk.Backing.(*types.VirtualDiskRawDiskMappingVer1BackingInfo); ok {
				if b.CompatibilityMode == "physicalMode" {
					serial = strings.TrimPrefix(filepath.Base(b.DeviceName), "naa.")
				} else if enabled {
					serial = strings.ToLower(strings.ReplaceAll(b.Uuid, "-", ""))
				}
			}
			key := fmt.Sprintf("%s/%d", vm.Self.Value, disk.Key)
			disks = append(disks, winDisk{AtStart: gv.initial[key], Slot: fmt.Sprintf("%s:%d:%d", kind, bus, unit), Size: size, Serial: serial, Device: guestDisksDev[key]})
		}
	})
	sort.SliceStable(disks, func(i, j int) bool { return disks[i].Slot < disks[j].Slot })
	b, _ := json.Marshal(map[string]interface{}{"vmName": gv.cfg.VM, "disks": disks})
	p := filepath.Join(gv.root, "model.json")
	return p, ioutil.WriteFile(p, b, 0o600)
}

func (g *guestOps) startWindows(gv *guestVM, spec *types.GuestProgramSpec) (int64, types.BaseMethodFault) {
	hp, err := gv.windowsPath(spec.ProgramPath)
	if err != nil {
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: spec.ProgramPath}}
	}
	if st, err := os.Stat(hp); err != nil || st.IsDir() {
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: spec.ProgramPath}}
	}
	dir := spec.WorkingDirectory
	if dir == "" {
		dir = gv.windowsHome()
	}
	hdir, err := gv.windowsPath(dir)
	if st, e2 := os.Stat(hdir); err != nil || e2 != nil || !st.IsDir() {
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: dir}}
	}
	var devs map[string]string
	if g.guestDisks != nil {
		devs = g.guestDisks.devices()
	}
	model, err := g.windowsModel(gv, devs)
	if err != nil {
		return 0, &types.SystemError{Reason: err.Error()}
	}
	// Windows has no shell between Tools and the program: the command line is the quoted program
	// path and the arguments as given
	cmdLine := `"` + spec.ProgramPath + `"`
	if spec.Arguments != "" {
		cmdLine += " " + spec.Arguments
	}
	exitFile := filepath.Join(gv.root, fmt.Sprintf(".exit-%d-%d", os.Getpid(), time.Now().UnixNano()))
	cmd := exec.Command("python3", filepath.Join(g.standins, "vsphere_guest.py"), spec.ProgramPath, spec.Arguments)
	cmd.Dir = hdir
	cmd.Env = []string{
		"STORSWEEP_GUEST_FS=" + filepath.Join(gv.root, "fs"),
		"STORSWEEP_GUEST_MODEL=" + model,
		"STORSWEEP_GUEST_STATE=" + filepath.Join(gv.root, "windows-guest.json"),
		"STORSWEEP_GUEST_CWD=" + dir,
		"STORSWEEP_GUEST_EXIT=" + exitFile,
		"PATH=/usr/bin:/bin",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	name := spec.ProgramPath
	if i := strings.LastIndexAny(name, `\/`); i >= 0 {
		name = name[i+1:]
	}
	return g.launch(gv, cmd, name, cmdLine, exitFile)
}
