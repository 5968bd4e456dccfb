package main

// Guest operations (-guest-ops FILE): GuestProcessManager (StartProgramInGuest,
// ListProcessesInGuest, TerminateProcessInGuest, ReadEnvironmentVariableInGuest) and the
// GuestFileManager's InitiateFileTransferToGuest / FromGuest, running for each configured lab VM
// in a lab "guest" of its own. govmomi 0.24's simulator has no process manager and its file
// transfer needs a Docker container per VM; this replaces both.
//
// Sources (vSphere Web Services API reference, vim.vm.guest.ProcessManager and
// vim.vm.guest.FileManager, developer.broadcom.com/xapis/vsphere-web-services-api/…/
// vim.vm.guest.ProcessManager.html, …ProcessManager.ProgramSpec.html, …ProcessManager.ProcessInfo.html,
// …FileManager.html):
//   - StartProgramInGuest faults: GuestOperationsUnavailable "if the VM agent for guest operations
//     is not running", InvalidPowerState "if the VM is not powered on", FileNotFound "if the program
//     path does not exist", GuestPermissionDenied "if the program path cannot be run because the
//     guest authentication will not allow the operation", InvalidGuestLogin "if the guest
//     authentication information was not accepted".
//   - GuestProgramSpec: programPath is "the absolute path to the program to start. For Linux guest
//     operating systems, /bin/bash is used to start the program"; arguments "will be executed by a
//     guest shell. This allows stdio redirection"; for Windows "prefixing the command with cmd /c
//     can provide stdio redirection"; envVariables "are not additions to the default environment
//     variables; they define the complete set available to the program".
//   - GuestProcessInfo endTime / exitCode: "if the process was started using StartProgramInGuest
//     then the process [completion time | exit code] will be available if queried within 5 minutes
//     after it completes".
//   - TerminateProcessInGuest: "On Posix guests, the process is sent a TERM signal. If that doesn't
//     terminate the process, a KILL signal is sent" (vSphere Automation API, vm/guest/processes
//     delete, which documents the same Tools operation).
//   - InitiateFileTransferToGuest: overwrite false and the file exists → FileAlreadyExists; the
//     returned URL takes an HTTP PUT of exactly fileSize bytes. InitiateFileTransferFromGuest
//     returns FileTransferInformation{attributes, size, url}; the URL takes an HTTP GET. "The host
//     part of the URL is returned as '*' if the hostname to be used is the name of the server to
//     which the call was made" (so with -esx); through vCenter it names the VM's host — here the
//     harness's own address, which stands for every simulated host's management address.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/ioutil"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// guestVMConfig is one lab VM's guest, from the -guest-ops file (never logged: it holds passwords).
type guestVMConfig struct {
	VM       string `json:"vm"`
	OS       string `json:"os"`
	GuestID  string `json:"guestId"`
	Username string `json:"username"`
	Password string `json:"password"`
	// Linux: the guest user may run anything as root through `sudo -n` (a prepared benchmark
	// account: the inventory's guest.sudo); a sudoers drop-in the harness writes once and keeps
	Sudo bool `json:"sudo"`
	// Windows: where the guest has diskspd.exe (default C:\Tools\diskspd.exe, as the inventory's)
	DiskspdPath string `json:"diskspdPath"`
	// Linux: the path at which this guest's programs see its own scratch directory (default: the
	// scratch directory's own path). Real guests each have their own file system, so VMs made from
	// one template have the same paths, each its own files: several lab guests given one workdir
	// each see their own directory there, as a clone does (clones.go: a bind mount in a mount
	// namespace of the guest's programs), and share nothing.
	Workdir string `json:"workdir"`
}

type guestOpsFile struct {
	Root string          `json:"root"`
	VMs  []guestVMConfig `json:"vms"`
}

// exited processes stay listed this long (GuestProcessInfo: "within 5 minutes after it completes")
const exitedKeep = 5 * time.Minute

// TerminateProcessInGuest waits this long after TERM before KILL (procMgrPosix.c ProcMgr_KillByPid)
const terminateGrace = 5 * time.Second

// a transfer URL is good for this long (the reference gives no lifetime; the harness is strict)
const transferTTL = 10 * time.Minute

type guestVM struct {
	cfg   guestVMConfig
	ref   types.ManagedObjectReference
	root  string // the lab guest's scratch directory (Linux: its home; Windows: holds fs/<drive>)
	uid   int
	gid   int
	group []uint32
	// Linux: the local account this harness made for this VM's guest (accountName), removed at
	// exit with its sudoers drop-in
	account string
	sudoers string
	tools   bool
	// the VM's disks when the harness started (device keys): they were there at the guest's boot
	initial map[string]bool
	// a clone's guest (clones.go): its own scratch directory on this machine, which its programs
	// see at root (the source's path: a clone's disk is a copy of its source's) through a bind
	// mount in a mount namespace of their own; "" for a configured VM
	hostRoot string
}

func (g *guestVM) windows() bool { return g.cfg.OS == "windows" }

type guestProc struct {
	VM        string     `json:"vm"`
	Pid       int64      `json:"pid"`
	Name      string     `json:"name"`
	Owner     string     `json:"owner"`
	CmdLine   string     `json:"cmdLine"`
	StartTime time.Time  `json:"startTime"`
	EndTime   *time.Time `json:"endTime,omitempty"`
	ExitCode  *int32     `json:"exitCode,omitempty"`
	Running   bool       `json:"running"`
	// a process the started one spawned (seen in /proc), not started by StartProgramInGuest
	Child bool `json:"child,omitempty"`
	cmd   *exec.Cmd
	done  chan struct{}
	// who its group's processes must be to count as the guest's: the guest user (Linux), or a
	// Windows stand-in process (-1: its environment names the guest's file system)
	uid int
}

type guestCall struct {
	Method string    `json:"method"`
	VM     string    `json:"vm"`
	Time   time.Time `json:"time"`
	Fault  string    `json:"fault,omitempty"`
}

type transfer struct {
	vm      *guestVM
	path    string // Linux: the guest path; Windows: the host path it maps to
	put     bool
	size    int64
	expires time.Time
}

type guestOps struct {
	root       string
	removeRoot bool
	standins   string // src/lab/harness/windows
	esx        bool
	listenHost string
	guestDisks *guestDisks // -guest-disks, for the Windows guest's disk model; may be nil

	mu    sync.Mutex
	vms   map[string]*guestVM // by VM MoRef value
	procs []*guestProc
	// every process group a started program led (pgid = its pid), for the harness's lifetime
	groups    map[int]*guestProc
	calls     []guestCall
	transfers map[string]*transfer
	nextID    int
}

var linuxUserRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// newGuestOps reads the -guest-ops file and prepares each configured VM's guest: its Tools
// state, guest OS identity, scratch directory and (Linux) local user.
func newGuestOps(file, standins string, esx bool) (ops *guestOps, err error) {
	raw, err := ioutil.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("-guest-ops: %w", err)
	}
	var cfg guestOpsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("-guest-ops %s: invalid JSON: %v", file, err)
	}
	g := &guestOps{standins: standins, esx: esx, vms: map[string]*guestVM{}, transfers: map[string]*transfer{}, groups: map[int]*guestProc{}, nextID: 1}
	if cfg.Root == "" {
		d, err := ioutil.TempDir("", "vcsim-guest-")
		if err != nil {
			return nil, err
		}
		cfg.Root, g.removeRoot = d, true
	}
	g.root, _ = filepath.Abs(cfg.Root)
	defer func() {
		if err != nil {
			g.removeAccounts()
			if g.removeRoot {
				_ = os.RemoveAll(g.root)
			}
		}
	}()
	if err := os.MkdirAll(g.root, 0o755); err != nil {
		return nil, fmt.Errorf("-guest-ops root: %w", err)
	}
	// the guest users must reach their scratch directories
	_ = os.Chmod(g.root, 0o755)
	for i, c := range cfg.VMs {
		where := fmt.Sprintf("-guest-ops %s: vms[%d]", file, i)
		if c.VM == "" || c.Username == "" || c.Password == "" {
			return nil, fmt.Errorf("%s: \"vm\", \"username\" and \"password\" are required", where)
		}
		if c.GuestID == "" {
			if c.OS == "windows" {
				c.GuestID = "windows9Server64Guest"
			} else {
				c.GuestID = "ubuntu64Guest"
			}
		}
		if c.OS == "" {
			c.OS = "linux"
			if strings.HasPrefix(c.GuestID, "windows") {
				c.OS = "windows"
			}
		}
		if c.OS != "linux" && c.OS != "windows" {
			return nil, fmt.Errorf("%s: \"os\" must be linux or windows, got %q", where, c.OS)
		}
		if (c.OS == "windows") != strings.HasPrefix(c.GuestID, "windows") {
			return nil, fmt.Errorf("%s: guestId %q does not match os %q", where, c.GuestID, c.OS)
		}
		vm := findVM(c.VM)
		if vm == nil {
			return nil, fmt.Errorf("%s: no VM named %q in the simulator's inventory", where, c.VM)
		}
		gv := &guestVM{cfg: c, ref: vm.Self, root: filepath.Join(g.root, c.VM), tools: true, initial: map[string]bool{}}
		// a benchmark guest is prepared with disk.EnableUUID = TRUE (guestdisks.go)
		if !diskUUIDEnabled(vm) {
			simulator.Map.WithLock(vm, func() {
				vm.Config.ExtraConfig = append(vm.Config.ExtraConfig, &types.OptionValue{Key: "disk.EnableUUID", Value: "TRUE"})
			})
		}
		for _, d := range disksOf(vm) {
			gv.initial[d.key] = true
		}
		if err := os.MkdirAll(gv.root, 0o755); err != nil {
			return nil, err
		}
		if c.OS != "linux" && c.Workdir != "" {
			return nil, fmt.Errorf("%s: \"workdir\" is for a Linux guest", where)
		}
		if c.OS == "linux" && c.Workdir != "" {
			if !filepath.IsAbs(c.Workdir) || filepath.Clean(c.Workdir) != c.Workdir {
				return nil, fmt.Errorf("%s: \"workdir\" must be an absolute, clean path, got %q", where, c.Workdir)
			}
			// the mount point the guest's own directory is bound over (clones.go command)
			if err := os.MkdirAll(c.Workdir, 0o755); err != nil {
				return nil, fmt.Errorf("%s: workdir: %v", where, err)
			}
			gv.hostRoot, gv.root = gv.root, c.Workdir
		}
		if c.OS == "linux" {
			if err := gv.ensureLinuxUser(g.root); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			// registered before anything can fail: a failed start removes the account too
			g.vms[vm.Self.Value] = gv
			if c.Sudo {
				if gv.sudoers, err = ensureSudoers(gv.account); err != nil {
					return nil, fmt.Errorf("%s: %v", where, err)
				}
			}
			own := gv.hostPath(gv.root)
			if err := os.Chown(own, gv.uid, gv.gid); err != nil {
				return nil, err
			}
			_ = os.Chmod(own, 0o700)
			if gv.hostRoot == "" && gv.testAs("-dir", gv.root) != 0 {
				// not fatal: a program given a reachable workingDirectory still runs
				log.Printf("-guest-ops: the guest user %s cannot reach its scratch directory %s (a parent directory is not searchable by it); StartProgramInGuest without workingDirectory will fail with FileNotFound", c.Username, gv.root)
			}
		} else {
			if c.DiskspdPath == "" {
				gv.cfg.DiskspdPath = `C:\Tools\diskspd.exe`
			}
			if _, err := os.Stat(filepath.Join(standins, "vsphere_guest.py")); err != nil {
				return nil, fmt.Errorf("%s: a Windows lab guest runs the Windows stand-ins, not found: %v", where, err)
			}
			if err := gv.seedWindows(); err != nil {
				return nil, err
			}
		}
		g.vms[vm.Self.Value] = gv
		gv.publishTools(vm)
	}
	return g, nil
}

func findVM(name string) *simulator.VirtualMachine {
	for _, obj := range simulator.Map.All("VirtualMachine") {
		if vm, ok := obj.(*simulator.VirtualMachine); ok && vm.Name == name {
			return vm
		}
	}
	return nil
}

// accountName is the local account of one harness's one Linux lab guest: derived from the
// harness's guest root and the VM, so two harnesses (two labs) or two VMs never share a uid, as two
// real guests share nothing; the same lab root gets the same name again after a restart.
func accountName(root, vm string) string {
	sum := sha256.Sum256([]byte(root + "\x00" + vm))
	return "ssg-" + hex.EncodeToString(sum[:])[:12]
}

// the GECOS comment that marks an account as a lab guest account of the harness with that root
func accountMarker(root, vm string) string {
	return "storsweep vcsim lab guest " + vm + " " + root
}

// ensureLinuxUser creates the local account the guest's programs run as: one per harness and VM
// (accountName; a system account without password, home or login shell), removed at exit
// (removeAccount). The guest login is still cfg.Username (the credentials, USER/LOGNAME, the
// process owner ListProcessesInGuest reports); only `id -un` in the guest shows the account name.
// An account of that name left by a harness that did not exit (killed) is taken over only when its
// comment names this VM and root (accountMarker): never an account we did not create.
// The account is NOT in group disk: every lab's guest is this machine, and group disk opens every
// block device on it (other labs' loop devices, the host's own disks), where a real guest sees only
// its own virtual disks. The harness gives the account exactly the loop devices of its VM's disks
// (guestdisks.go grantDevice).
func (gv *guestVM) ensureLinuxUser(root string) error {
	if !linuxUserRE.MatchString(gv.cfg.Username) {
		return fmt.Errorf("a Linux lab guest's username is a local account name (%s), got %q", linuxUserRE, gv.cfg.Username)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("the Linux lab guest runs programs as a local account the harness creates for it; creating it (and switching to it) needs root")
	}
	name, marker := accountName(root, gv.cfg.VM), accountMarker(root, gv.cfg.VM)
	u, err := user.Lookup(name)
	if err == nil {
		if u.Name != marker {
			return fmt.Errorf("the local account %q exists and is not this harness's lab guest account (its comment is %q, not %q); not using it", name, u.Name, marker)
		}
	} else {
		out, err := exec.Command("useradd", "--system", "--user-group", "--comment", marker,
			"--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err != nil {
			return fmt.Errorf("useradd %s: %s (%v)", name, strings.TrimSpace(string(out)), err)
		}
		if u, err = user.Lookup(name); err != nil {
			return err
		}
	}
	gv.account = name
	gv.uid, _ = strconv.Atoi(u.Uid)
	gv.gid, _ = strconv.Atoi(u.Gid)
	ids, _ := u.GroupIds()
	disk := -1
	if grp, err := user.LookupGroup("disk"); err == nil {
		disk, _ = strconv.Atoi(grp.Gid)
	}
	for _, s := range ids {
		if n, err := strconv.Atoi(s); err == nil && n != disk {
			gv.group = append(gv.group, uint32(n))
		}
	}
	if gv.gid == disk {
		return fmt.Errorf("the Linux lab guest user %q has group disk as its primary group, which opens every block device on this machine; give it its own group", name)
	}
	return nil
}

// diskOwners maps each Linux lab guest's VM (MoRef value) to its guest user's uid: the one
// account given that VM's disks (guestdisks.go).
func (g *guestOps) diskOwners() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for ref, gv := range g.vms {
		if !gv.windows() {
			out[ref] = gv.uid
		}
	}
	return out
}

// ensureSudoers gives the guest's account passwordless sudo (/etc/sudoers.d/<account>, checked
// with visudo -c), as a benchmark guest is prepared for storsweep's guest.sudo; removed at exit
// with the account. Lab limit: sudo here is root on the lab machine itself, not in a VM
// (docs/decisions.md).
func ensureSudoers(name string) (string, error) {
	file := filepath.Join("/etc/sudoers.d", name)
	if _, err := exec.LookPath("sudo"); err != nil {
		return "", fmt.Errorf("\"sudo\": true needs sudo in the lab guest (this machine): %v", err)
	}
	tmp := file + ".tmp"
	if err := ioutil.WriteFile(tmp, []byte(name+" ALL=(ALL) NOPASSWD: ALL\n"), 0o440); err != nil {
		return "", err
	}
	if out, err := exec.Command("visudo", "-c", "-f", tmp).CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("visudo -c -f %s: %s (%v)", tmp, strings.TrimSpace(string(out)), err)
	}
	return file, os.Rename(tmp, file)
}

// removeAccounts removes the accounts (and sudoers drop-ins) this harness made for its Linux
// guests; their processes are gone by then (close).
func (g *guestOps) removeAccounts() {
	g.mu.Lock()
	vms := make([]*guestVM, 0, len(g.vms))
	for _, gv := range g.vms {
		vms = append(vms, gv)
	}
	g.mu.Unlock()
	for _, gv := range vms {
		g.removeAccount(gv)
	}
}

// removeAccount removes the account (and sudoers drop-in) the harness made for one Linux guest,
// with whatever still runs as it.
func (g *guestOps) removeAccount(gv *guestVM) {
	{
		if gv.sudoers != "" {
			_ = os.Remove(gv.sudoers)
		}
		if gv.account == "" {
			return
		}
		if u, err := user.Lookup(gv.account); err != nil || u.Name != accountMarker(g.root, gv.cfg.VM) {
			return
		}
		// the account is this harness's alone: whatever still runs as it (a daemon a program
		// detached with setsid) is the guest's, and goes with it, or userdel refuses
		for i := 0; i < 20; i++ {
			pids := processesOfUID(gv.uid)
			if len(pids) == 0 {
				break
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, err := exec.Command("userdel", gv.account).CombinedOutput(); err != nil {
			log.Printf("userdel %s: %s (%v)", gv.account, strings.TrimSpace(string(out)), err)
		}
	}
}

// publishTools makes the VM's guest look like one with VMware Tools running (or not).
func (gv *guestVM) publishTools(vm *simulator.VirtualMachine) {
	family, full := "linuxGuest", "Ubuntu Linux (64-bit)"
	if gv.windows() {
		family, full = "windowsGuest", "Microsoft Windows Server 2016 or later (64-bit)"
	}
	running := string(types.VirtualMachineToolsRunningStatusGuestToolsNotRunning)
	status := types.VirtualMachineToolsStatusToolsNotRunning
	on := false
	simulator.Map.WithLock(vm, func() { on = vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn })
	up := gv.tools && on
	if up {
		running = string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)
		status = types.VirtualMachineToolsStatusToolsOk
	}
	simulator.Map.WithLock(vm, func() {
		vm.Config.GuestId, vm.Config.GuestFullName = gv.cfg.GuestID, full
		g := vm.Guest
		if g == nil {
			g = &types.GuestInfo{}
			vm.Guest = g
		}
		g.GuestId, g.GuestFamily, g.GuestFullName = gv.cfg.GuestID, family, full
		g.ToolsRunningStatus, g.ToolsStatus = running, status
		// Tools 12.3.5: toolsVersion encodes major*1024 + minor*32 + patch (12389)
		g.ToolsVersion, g.ToolsVersionStatus2 = "12389", string(types.VirtualMachineToolsVersionStatusGuestToolsCurrent)
		g.GuestOperationsReady = types.NewBool(up)
		g.GuestState = map[bool]string{true: "running", false: "notRunning"}[on]
		vm.Summary.Guest = &types.VirtualMachineGuestSummary{
			GuestId: gv.cfg.GuestID, GuestFullName: full, ToolsStatus: status,
			ToolsVersionStatus2: g.ToolsVersionStatus2, ToolsRunningStatus: running,
		}
		vm.Summary.Config.GuestId, vm.Summary.Config.GuestFullName = gv.cfg.GuestID, full
		simulator.Map.Update(vm, []types.PropertyChange{
			{Name: "guest", Val: *g},
			{Name: "config.guestId", Val: gv.cfg.GuestID},
			{Name: "summary.guest", Val: *vm.Summary.Guest},
		})
	})
}

// powerChanged republishes a configured VM's Tools state after a power operation: Tools run
// only while the VM is powered on.
func (g *guestOps) powerChanged(ref types.ManagedObjectReference) {
	g.mu.Lock()
	gv := g.vms[ref.Value]
	g.mu.Unlock()
	if vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine); ok && gv != nil {
		gv.publishTools(vm)
		// a powered-off VM runs nothing: its guest's processes end with it (clones.go)
		off := false
		simulator.Map.WithLock(vm, func() { off = vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOff })
		if off {
			g.stopGuest(gv)
		}
	}
}

// install replaces the simulator's GuestProcessManager and GuestFileManager objects.
func (g *guestOps) install() {
	content := simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}).(*simulator.ServiceInstance).Content
	gom := simulator.Map.Get(*content.GuestOperationsManager).(*simulator.GuestOperationsManager)
	pm := &guestProcessManager{ops: g}
	pm.Self = *gom.ProcessManager
	simulator.Map.Put(pm)
	fm := &guestFileManager{ops: g}
	fm.Self = *gom.FileManager
	simulator.Map.Put(fm)
}

// close kills every guest process still running (a lab guest outlives no harness).
func (g *guestOps) close() {
	g.mu.Lock()
	procs := append([]*guestProc(nil), g.procs...)
	g.mu.Unlock()
	for _, p := range procs {
		if p.Running {
			_ = syscall.Kill(int(p.Pid), syscall.SIGKILL)
		}
	}
	// and whatever they left running (checked to be the guest's, groupMembers)
	for _, p := range g.processes("") {
		if p.Child {
			_ = syscall.Kill(int(p.Pid), syscall.SIGKILL)
		}
	}
	for _, p := range procs {
		if p.done != nil {
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
		}
	}
	g.removeAccounts()
	if g.removeRoot {
		_ = os.RemoveAll(g.root)
	}
}

// processesOfUID lists the pids running as uid (/proc/<pid>/status Uid: real uid).
func processesOfUID(uid int) []int {
	var out []int
	ents, _ := ioutil.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := ioutil.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(st), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
				if n, _ := strconv.Atoi(f[1]); n == uid {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out
}

func (g *guestOps) logCall(method string, vm types.ManagedObjectReference, f types.BaseMethodFault) {
	c := guestCall{Method: method, VM: entityName(vm), Time: time.Now().UTC()}
	if f != nil {
		c.Fault = strings.TrimPrefix(fmt.Sprintf("%T", f), "*types.")
	}
	g.mu.Lock()
	g.calls = append(g.calls, c)
	g.mu.Unlock()
}

// reply logs a guest operation and turns its fault, if any, into the SOAP fault of the reply (nil:
// the call succeeded and the handler fills in its result).
func (g *guestOps) reply(method string, vm types.ManagedObjectReference, f types.BaseMethodFault) *soap.Fault {
	g.logCall(method, vm, f)
	if f != nil {
		return guestFault(f)
	}
	return nil
}

// authorized runs op on the guest once authorize has let the call through (its fault otherwise).
func (g *guestOps) authorized(ref types.ManagedObjectReference, auth types.BaseGuestAuthentication, op func(gv *guestVM) types.BaseMethodFault) types.BaseMethodFault {
	gv, f := g.authorize(ref, auth)
	if f != nil {
		return f
	}
	return op(gv)
}

// authorize checks, in the order a host does, that a guest operation can run: the VM exists and
// is powered on (InvalidPowerState), its Tools run (GuestOperationsUnavailable), and the
// credentials are the guest's (InvalidGuestLogin; only NamePasswordAuthentication is offered).
func (g *guestOps) authorize(ref types.ManagedObjectReference, auth types.BaseGuestAuthentication) (*guestVM, types.BaseMethodFault) {
	vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return nil, &types.ManagedObjectNotFound{Obj: ref}
	}
	var state types.VirtualMachinePowerState
	simulator.Map.WithLock(vm, func() { state = vm.Runtime.PowerState })
	if state != types.VirtualMachinePowerStatePoweredOn {
		return nil, &types.InvalidPowerState{RequestedState: types.VirtualMachinePowerStatePoweredOn, ExistingState: state}
	}
	g.mu.Lock()
	gv := g.vms[ref.Value]
	g.mu.Unlock()
	if gv == nil || !gv.tools {
		return nil, &types.GuestOperationsUnavailable{}
	}
	creds, ok := auth.(*types.NamePasswordAuthentication)
	if !ok || creds.Username != gv.cfg.Username || creds.Password != gv.cfg.Password {
		return nil, &types.InvalidGuestLogin{}
	}
	return gv, nil
}

func guestFault(f types.BaseMethodFault) *soap.Fault {
	msg := ""
	switch f.(type) {
	case *types.InvalidGuestLogin:
		msg = "Failed to authenticate with the guest operating system using the supplied credentials."
	case *types.GuestOperationsUnavailable:
		msg = "The guest operations agent could not be contacted."
	case *types.InvalidPowerState:
		msg = "The attempted operation cannot be performed in the current state (Powered off)."
	case *types.GuestPermissionDenied:
		msg = "Insufficient permissions in guest operating system."
	case *types.FileNotFound:
		msg = fmt.Sprintf("File %s was not found", f.(*types.FileNotFound).File)
	case *types.NotADirectory:
		msg = fmt.Sprintf("%s is not a directory", f.(*types.NotADirectory).File)
	case *types.DirectoryNotEmpty:
		msg = fmt.Sprintf("The directory %s is not empty", f.(*types.DirectoryNotEmpty).File)
	case *types.NotAFile:
		msg = fmt.Sprintf("%s is not a file", f.(*types.NotAFile).File)
	case *types.FileAlreadyExists:
		msg = fmt.Sprintf("The file %s already exists", f.(*types.FileAlreadyExists).File)
	case *types.GuestProcessNotFound:
		msg = fmt.Sprintf("The guest process %d was not found", f.(*types.GuestProcessNotFound).Pid)
	default:
		msg = strings.TrimPrefix(fmt.Sprintf("%T", f), "*types.")
	}
	return simulator.Fault(msg, f)
}

// --- process manager ------------------------------------------------------------------------

type guestProcessManager struct {
	simulator.GuestProcessManager
	ops *guestOps
}

// StartProgramInGuest: vim.vm.guest.ProcessManager.startProgram.
func (m *guestProcessManager) StartProgramInGuest(ctx *simulator.Context, req *types.StartProgramInGuest) soap.HasFault {
	body := new(methods.StartProgramInGuestBody)
	pid, f := m.ops.start(req)
	if body.Fault_ = m.ops.reply("StartProgramInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.StartProgramInGuestResponse{Returnval: pid}
	}
	return body
}

func (g *guestOps) start(req *types.StartProgramInGuest) (int64, types.BaseMethodFault) {
	gv, f := g.authorize(req.Vm, req.Auth)
	if f != nil {
		return 0, f
	}
	spec := req.Spec.GetGuestProgramSpec()
	if gv.windows() {
		return g.startWindows(gv, spec)
	}
	return g.startLinux(gv, spec)
}

func (g *guestOps) startLinux(gv *guestVM, spec *types.GuestProgramSpec) (int64, types.BaseMethodFault) {
	if !path.IsAbs(spec.ProgramPath) {
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: spec.ProgramPath}}
	}
	// the program as the guest user sees it: missing → FileNotFound, not executable by it →
	// GuestPermissionDenied (the kernel decides, as in a guest)
	switch gv.testAs("-x", spec.ProgramPath) {
	case 1:
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: spec.ProgramPath}}
	case 2:
		return 0, &types.GuestPermissionDenied{}
	}
	dir := spec.WorkingDirectory
	if dir == "" {
		dir = gv.root
	}
	if !path.IsAbs(dir) || gv.testAs("-dir", dir) != 0 {
		return 0, &types.FileNotFound{FileFault: types.FileFault{File: dir}}
	}
	env := spec.EnvVariables
	if len(env) == 0 {
		env = []string{"HOME=" + gv.root, "USER=" + gv.cfg.Username, "LOGNAME=" + gv.cfg.Username,
			"SHELL=/bin/bash", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"}
	}
	// The command line Tools builds: the program path in double quotes, the arguments as given
	// (open-vm-tools services/plugins/vix/vixTools.c VixToolsStartProgramImpl: fullCommandLine =
	// "\"%s\" %s" of programPath and arguments, "\"%s\"" without arguments; "to be safe, always put
	// quotes around the program name"). So a path with spaces or ; | & > works as a path, while
	// $ ` \ " in it are still read by the shell inside the double quotes, as in a real guest.
	line := `"` + spec.ProgramPath + `"`
	if spec.Arguments != "" {
		line += " " + spec.Arguments
	}
	// /bin/bash starts the program (GuestProgramSpec.programPath); bash execs a simple command,
	// so the pid is the program's
	cmd := gv.command("/bin/bash", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr.Setpgid = true
	return g.launch(gv, cmd, path.Base(spec.ProgramPath), line, "")
}

// launch starts the guest's program and records it. exitFile (Windows stand-in): where the
// program writes its 32-bit exit code, which a Linux exit status (8 bits) cannot carry.
func (g *guestOps) launch(gv *guestVM, cmd *exec.Cmd, name, cmdLine, exitFile string) (int64, types.BaseMethodFault) {
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, &types.SystemError{Reason: err.Error()}
	}
	defer devnull.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if err := cmd.Start(); err != nil {
		return 0, &types.GuestPermissionDenied{}
	}
	p := &guestProc{VM: gv.cfg.VM, Pid: int64(cmd.Process.Pid), Name: name, Owner: gv.cfg.Username,
		CmdLine: cmdLine, StartTime: time.Now().UTC(), Running: true, cmd: cmd, done: make(chan struct{}), uid: gv.uid}
	if gv.windows() {
		p.uid = -1
	}
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.groups[int(p.Pid)] = p
	g.mu.Unlock()
	go func() {
		err := cmd.Wait()
		code := int32(0)
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					// the harness reports a signalled process as a shell does (128 + signal);
					// what Tools reports is not documented
					code = int32(128 + int(ws.Signal()))
				} else {
					code = int32(ee.ExitCode())
				}
			} else {
				code = -1
			}
		}
		if exitFile != "" {
			if b, err := ioutil.ReadFile(exitFile); err == nil {
				if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 32); err == nil {
					code = int32(n)
				}
			}
			_ = os.Remove(exitFile)
		}
		now := time.Now().UTC()
		g.mu.Lock()
		p.Running, p.EndTime, p.ExitCode = false, &now, &code
		g.mu.Unlock()
		// what the program spawned keeps running, as in a guest: TerminateProcessInGuest and
		// the program's end reach that one process only
		close(p.done)
	}()
	return p.Pid, nil
}

// testAs runs a check as the guest user: 0 ok, 1 missing, 2 not permitted.
func (gv *guestVM) testAs(op, p string) int {
	script := `p=$2; [ -e "$p" ] || exit 1
case $1 in
  -x) [ -f "$p" ] && [ -x "$p" ] || exit 2 ;;
  -dir) [ -d "$p" ] && [ -x "$p" ] || exit 1 ;;
  -r) [ -r "$p" ] || exit 2 ;;
esac`
	cmd := gv.command("/bin/sh", "-c", script, "sh", op, p)
	err := cmd.Run()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return 1
	}
	return 2
}

// listProcessesBody carries GuestProcessInfo with exitCode always present once a process has
// ended: govmomi 0.24's type omits an exit code of 0 (omitempty), which a real host sends.
type listProcessesBody struct {
	Res    *ListProcessesInGuestResponse `xml:"ListProcessesInGuestResponse,omitempty"`
	Fault_ *soap.Fault            `xml:"http://schemas.xmlsoap.org/soap/envelope/ Fault,omitempty"`
}

func (b *listProcessesBody) Fault() *soap.Fault { return b.Fault_ }

// Named as the WSDL's response element: the simulator names the element after the Res field's Go
// type (simulator.go response.MarshalXML), and a real host answers <ListProcessesInGuestResponse>;
// as listProcessesResponse it sent <listProcessesResponse>, which a strict client refuses.
type ListProcessesInGuestResponse struct {
	Returnval []processInfoXML `xml:"returnval,omitempty"`
}

type processInfoXML struct {
	Name      string     `xml:"name"`
	Pid       int64      `xml:"pid"`
	Owner     string     `xml:"owner"`
	CmdLine   string     `xml:"cmdLine"`
	StartTime time.Time  `xml:"startTime"`
	EndTime   *time.Time `xml:"endTime,omitempty"`
	ExitCode  *int32     `xml:"exitCode,omitempty"`
}

// ListProcessesInGuest: vim.vm.guest.ProcessManager.listProcesses. The lab guest's processes are
// the ones StartProgramInGuest started there (running, or ended less than 5 minutes ago) and
// whatever they spawned that still runs.
func (m *guestProcessManager) ListProcessesInGuest(ctx *simulator.Context, req *types.ListProcessesInGuest) soap.HasFault {
	body := new(listProcessesBody)
	gv, f := m.ops.authorize(req.Vm, req.Auth)
	if body.Fault_ = m.ops.reply("ListProcessesInGuest", req.Vm, f); body.Fault_ != nil {
		return body
	}
	want := map[int64]bool{}
	for _, p := range req.Pids {
		want[p] = true
	}
	res := &ListProcessesInGuestResponse{}
	for _, p := range m.ops.processes(gv.cfg.VM) {
		if len(want) > 0 && !want[p.Pid] {
			continue
		}
		res.Returnval = append(res.Returnval, processInfoXML{Name: p.Name, Pid: p.Pid, Owner: p.Owner,
			CmdLine: p.CmdLine, StartTime: p.StartTime, EndTime: p.EndTime, ExitCode: p.ExitCode})
	}
	body.Res = res
	return body
}

// processes lists a VM's guest processes ("" = every VM's): the ones StartProgramInGuest started
// (running, or ended less than 5 minutes ago) and every live process of their process groups —
// what they spawned, also after the started one ended (as in a guest, ending a program does not
// end its children).
func (g *guestOps) processes(vm string) []guestProc {
	g.mu.Lock()
	keep := g.procs[:0]
	var out []guestProc
	listed := map[int]bool{}
	for _, p := range g.procs {
		if p.EndTime != nil && time.Since(*p.EndTime) > exitedKeep {
			continue
		}
		keep = append(keep, p)
		if vm == "" || p.VM == vm {
			out = append(out, *p)
			if p.Running {
				listed[int(p.Pid)] = true
			}
		}
	}
	g.procs = keep
	groups := map[int]*guestProc{}
	for pgid, p := range g.groups {
		if vm == "" || p.VM == vm {
			groups[pgid] = p
		}
	}
	g.mu.Unlock()
	return append(out, groupMembers(groups, listed)...)
}

// groupMembers lists the live processes (from /proc) of the given process groups, but those in skip.
func groupMembers(groups map[int]*guestProc, skip map[int]bool) []guestProc {
	if len(groups) == 0 {
		return nil
	}
	entries, _ := ioutil.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && !skip[pid] {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	var out []guestProc
	for _, pid := range pids {
		st, err := ioutil.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		pgid, _ := strconv.Atoi(f[2])
		root := groups[pgid]
		if root == nil {
			continue
		}
		// a reused group id is not the guest's: the process must be the guest user's (Linux) or a
		// Windows stand-in's
		env, _ := ioutil.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if root.uid >= 0 {
			if fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != root.uid {
				continue
			}
		} else if !strings.Contains(string(env), "STORSWEEP_GUEST_FS=") {
			continue
		}
		cmdline, _ := ioutil.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		name, line := path.Base(args[0]), strings.Join(args, " ")
		// a Windows stand-in process says which guest program it is (vsphere_guest.py)
		if len(env) > 0 {
			for _, kv := range strings.Split(string(env), "\x00") {
				if v := strings.TrimPrefix(kv, "STORSWEEP_GUEST_PROGRAM="); v != kv {
					name = v[strings.LastIndexAny(v, `\/`)+1:]
				}
				if v := strings.TrimPrefix(kv, "STORSWEEP_GUEST_CMDLINE="); v != kv {
					line = v
				}
			}
		}
		out = append(out, guestProc{VM: root.VM, Pid: int64(pid), Name: name, Owner: root.Owner,
			CmdLine: line, StartTime: procStart(pid, root.StartTime), Running: true, Child: true})
	}
	return out
}

// procStart is a process's start time from /proc (stat field 22, clock ticks since boot at the
// usual 100 Hz, plus btime); the fallback when that cannot be read.
func procStart(pid int, fallback time.Time) time.Time {
	st, err := ioutil.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return fallback
	}
	s := string(st)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return fallback
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return fallback
	}
	b, err := ioutil.ReadFile("/proc/stat")
	if err != nil {
		return fallback
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "btime ") {
			bt, _ := strconv.ParseInt(strings.TrimSpace(l[6:]), 10, 64)
			return time.Unix(bt, 0).Add(time.Duration(ticks) * 10 * time.Millisecond).UTC()
		}
	}
	return fallback
}

// TerminateProcessInGuest: vim.vm.guest.ProcessManager.terminateProcess. TERM, then KILL when the
// process has not ended within 5 s, as Tools does (open-vm-tools lib/procMgr/procMgrPosix.c
// ProcMgr_KillByPid: ProcMgrKill(procId, SIGTERM, 5), then ProcMgrKill(procId, SIGKILL, 15)).
// Unknown pid → GuestProcessNotFound.
func (m *guestProcessManager) TerminateProcessInGuest(ctx *simulator.Context, req *types.TerminateProcessInGuest) soap.HasFault {
	body := new(methods.TerminateProcessInGuestBody)
	f := m.ops.terminate(req)
	if body.Fault_ = m.ops.reply("TerminateProcessInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.TerminateProcessInGuestResponse{}
	}
	return body
}

func (g *guestOps) terminate(req *types.TerminateProcessInGuest) types.BaseMethodFault {
	gv, f := g.authorize(req.Vm, req.Auth)
	if f != nil {
		return f
	}
	var target *guestProc
	for _, p := range g.processes(gv.cfg.VM) {
		if p.Pid == req.Pid && p.Running {
			cp := p
			target = &cp
		}
	}
	if target == nil {
		return &types.GuestProcessNotFound{Pid: req.Pid}
	}
	if gv.windows() {
		// Windows has no TERM: the process is ended (TerminateProcess)
		_ = syscall.Kill(int(target.Pid), syscall.SIGKILL)
		return nil
	}
	_ = syscall.Kill(int(target.Pid), syscall.SIGTERM)
	deadline := time.Now().Add(terminateGrace)
	for time.Now().Before(deadline) {
		if !alive(int(target.Pid)) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(int(target.Pid), syscall.SIGKILL)
	return nil
}

// alive: the process exists and is not a zombie waiting for its parent.
func alive(pid int) bool {
	st, err := ioutil.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(st)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && !strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z")
}

// ReadEnvironmentVariableInGuest: vim.vm.guest.ProcessManager.readEnvironmentVariable — the
// environment a program started without envVariables gets ("NAME=value" strings; names not set
// are left out; no names → all).
func (m *guestProcessManager) ReadEnvironmentVariableInGuest(ctx *simulator.Context, req *types.ReadEnvironmentVariableInGuest) soap.HasFault {
	body := new(methods.ReadEnvironmentVariableInGuestBody)
	gv, f := m.ops.authorize(req.Vm, req.Auth)
	if body.Fault_ = m.ops.reply("ReadEnvironmentVariableInGuest", req.Vm, f); body.Fault_ != nil {
		return body
	}
	var env []string
	if gv.windows() {
		home := `C:\Users\` + gv.cfg.Username
		env = []string{"COMPUTERNAME=" + strings.ToUpper(gv.cfg.VM), "HOMEDRIVE=C:", `HOMEPATH=\Users\` + gv.cfg.Username,
			`PATH=C:\Windows\system32;C:\Windows`, "SystemRoot=C:\\Windows", "TEMP=" + home + `\AppData\Local\Temp`,
			"TMP=" + home + `\AppData\Local\Temp`, "USERNAME=" + gv.cfg.Username, "USERPROFILE=" + home}
	} else {
		env = []string{"HOME=" + gv.root, "LANG=C.UTF-8", "LOGNAME=" + gv.cfg.Username,
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SHELL=/bin/bash", "USER=" + gv.cfg.Username}
	}
	res := &types.ReadEnvironmentVariableInGuestResponse{}
	for _, e := range env {
		name := e[:strings.IndexByte(e, '=')]
		if len(req.Names) == 0 {
			res.Returnval = append(res.Returnval, e)
			continue
		}
		for _, n := range req.Names {
			if n == name || (gv.windows() && strings.EqualFold(n, name)) {
				res.Returnval = append(res.Returnval, e)
			}
		}
	}
	body.Res = res
	return body
}

// --- file manager ---------------------------------------------------------------------------

type guestFileManager struct {
	simulator.GuestFileManager
	ops *guestOps
}

func (g *guestOps) transferURL(t *transfer) string {
	tok := make([]byte, 16)
	_, _ = rand.Read(tok)
	token := hex.EncodeToString(tok)
	g.mu.Lock()
	id := g.nextID
	g.nextID++
	g.transfers[token] = t
	g.mu.Unlock()
	host := "*"
	if !g.esx {
		host = g.listenHost
	}
	return (&url.URL{Scheme: "https", Host: host, Path: "/guestFile",
		RawQuery: url.Values{"id": {strconv.Itoa(id)}, "token": {token}}.Encode()}).String()
}

// InitiateFileTransferToGuest: vim.vm.guest.FileManager.initiateFileTransferToGuest.
func (m *guestFileManager) InitiateFileTransferToGuest(ctx *simulator.Context, req *types.InitiateFileTransferToGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferToGuestBody)
	u, f := m.ops.toGuest(req)
	if body.Fault_ = m.ops.reply("InitiateFileTransferToGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.InitiateFileTransferToGuestResponse{Returnval: u}
	}
	return body
}

func (g *guestOps) toGuest(req *types.InitiateFileTransferToGuest) (string, types.BaseMethodFault) {
	gv, f := g.authorize(req.Vm, req.Auth)
	if f != nil {
		return "", f
	}
	if req.FileSize < 0 {
		return "", &types.InvalidArgument{InvalidProperty: "fileSize"}
	}
	t := &transfer{vm: gv, put: true, size: req.FileSize, expires: time.Now().Add(transferTTL)}
	var fault types.BaseMethodFault
	if gv.windows() {
		t.path, fault = gv.windowsTarget(req.GuestFilePath, req.Overwrite)
	} else {
		t.path, fault = req.GuestFilePath, gv.linuxTarget(req.GuestFilePath, req.Overwrite)
	}
	if fault != nil {
		return "", fault
	}
	return g.transferURL(t), nil
}

// linuxTarget checks, as the guest user, that the file can be written there.
func (gv *guestVM) linuxTarget(p string, overwrite bool) types.BaseMethodFault {
	if !path.IsAbs(p) {
		return &types.InvalidArgument{InvalidProperty: "guestFilePath"}
	}
	script := `p=$1; d=$(dirname -- "$p")
[ -d "$d" ] || exit 3
[ -d "$p" ] && exit 5
if [ -e "$p" ]; then [ "$2" = 1 ] || exit 4; [ -w "$p" ] || exit 6
else [ -w "$d" ] && [ -x "$d" ] || exit 6; fi`
	return gv.checkAs(script, p, boolArg(overwrite))
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (gv *guestVM) checkAs(script string, p string, args ...string) types.BaseMethodFault {
	cmd := gv.command("/bin/sh", append([]string{"-c", script, "sh", p}, args...)...)
	err := cmd.Run()
	if err == nil {
		return nil
	}
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	return fileFault(code, p)
}

// InitiateFileTransferFromGuest: vim.vm.guest.FileManager.initiateFileTransferFromGuest.
func (m *guestFileManager) InitiateFileTransferFromGuest(ctx *simulator.Context, req *types.InitiateFileTransferFromGuest) soap.HasFault {
	body := new(methods.InitiateFileTransferFromGuestBody)
	info, f := m.ops.fromGuest(req)
	if body.Fault_ = m.ops.reply("InitiateFileTransferFromGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.InitiateFileTransferFromGuestResponse{Returnval: *info}
	}
	return body
}

func (g *guestOps) fromGuest(req *types.InitiateFileTransferFromGuest) (*types.FileTransferInformation, types.BaseMethodFault) {
	gv, f := g.authorize(req.Vm, req.Auth)
	if f != nil {
		return nil, f
	}
	t := &transfer{vm: gv, expires: time.Now().Add(transferTTL)}
	var fi os.FileInfo
	if gv.windows() {
		p, err := gv.windowsPath(req.GuestFilePath)
		if err != nil {
			return nil, &types.InvalidArgument{InvalidProperty: "guestFilePath"}
		}
		if fi, err = os.Stat(p); err != nil {
			return nil, &types.FileNotFound{FileFault: types.FileFault{File: req.GuestFilePath}}
		}
		t.path = p
	} else {
		if !path.IsAbs(req.GuestFilePath) {
			return nil, &types.InvalidArgument{InvalidProperty: "guestFilePath"}
		}
		if f := gv.checkAs(`[ -e "$1" ] || exit 3; [ -d "$1" ] && exit 5; [ -r "$1" ] || exit 6; exit 0`, req.GuestFilePath); f != nil {
			return nil, f
		}
		var err error
		if fi, err = os.Stat(gv.hostPath(req.GuestFilePath)); err != nil {
			return nil, &types.FileNotFound{FileFault: types.FileFault{File: req.GuestFilePath}}
		}
		t.path = req.GuestFilePath
	}
	if fi.IsDir() {
		return nil, &types.NotAFile{FileFault: types.FileFault{File: req.GuestFilePath}}
	}
	mt := fi.ModTime().UTC()
	var attrs types.BaseGuestFileAttributes
	if gv.windows() {
		attrs = &types.GuestWindowsFileAttributes{GuestFileAttributes: types.GuestFileAttributes{ModificationTime: &mt},
			Hidden: types.NewBool(false), ReadOnly: types.NewBool(fi.Mode()&0o200 == 0), CreateTime: &mt}
	} else {
		st := fi.Sys().(*syscall.Stat_t)
		uid, gid := int32(st.Uid), int32(st.Gid)
		at := time.Unix(st.Atim.Sec, st.Atim.Nsec).UTC()
		attrs = &types.GuestPosixFileAttributes{GuestFileAttributes: types.GuestFileAttributes{ModificationTime: &mt, AccessTime: &at},
			OwnerId: &uid, GroupId: &gid, Permissions: int64(fi.Mode().Perm())}
	}
	return &types.FileTransferInformation{Attributes: attrs, Size: fi.Size(), Url: g.transferURL(t)}, nil
}

// serveFile handles PUT/GET on a transfer URL: /guestFile?id=…&token=….
func (g *guestOps) serveFile(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	g.mu.Lock()
	t := g.transfers[token]
	if t != nil && time.Now().After(t.expires) {
		delete(g.transfers, token)
		t = nil
	}
	g.mu.Unlock()
	method := "GET /guestFile"
	if r.Method == http.MethodPut {
		method = "PUT /guestFile"
	}
	vmRef := types.ManagedObjectReference{}
	if t != nil {
		vmRef = t.vm.ref
	}
	fail := func(code int, msg string) {
		g.mu.Lock()
		g.calls = append(g.calls, guestCall{Method: method, VM: entityName(vmRef), Time: time.Now().UTC(), Fault: fmt.Sprintf("HTTP %d", code)})
		g.mu.Unlock()
		http.Error(w, msg, code)
	}
	if t == nil {
		fail(http.StatusNotFound, "unknown or expired guest file transfer")
		return
	}
	if (r.Method == http.MethodPut) != t.put || (r.Method != http.MethodPut && r.Method != http.MethodGet) {
		fail(http.StatusMethodNotAllowed, "this transfer URL takes "+map[bool]string{true: "PUT", false: "GET"}[t.put])
		return
	}
	var err error
	if t.put {
		if r.ContentLength != t.size {
			fail(http.StatusBadRequest, fmt.Sprintf("the upload must be the fileSize given to InitiateFileTransferToGuest (%d bytes), got Content-Length %d", t.size, r.ContentLength))
			return
		}
		err = t.vm.write(t.path, io.LimitReader(r.Body, t.size))
		if err == nil {
			g.mu.Lock()
			delete(g.transfers, token) // an upload URL is used once
			g.mu.Unlock()
		}
	} else {
		err = t.vm.read(t.path, w)
	}
	if err != nil {
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	g.mu.Lock()
	g.calls = append(g.calls, guestCall{Method: method, VM: entityName(vmRef), Time: time.Now().UTC()})
	g.mu.Unlock()
}

// write stores an upload in the guest (Linux: as the guest user, so its permissions apply).
func (gv *guestVM) write(p string, body io.Reader) error {
	if gv.windows() {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	cmd := gv.command("/bin/sh", "-c", `exec cat > "$1"`, "sh", p)
	cmd.Stdin = body
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("writing %s in the guest: %s", p, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func (gv *guestVM) read(p string, w http.ResponseWriter) error {
	if gv.windows() {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, _ := f.Stat()
		w.Header().Set("Content-Length", strconv.FormatInt(fi.Size(), 10))
		w.Header().Set("Content-Type", "application/octet-stream")
		_, err = io.Copy(w, f)
		return err
	}
	var out, stderr bytes.Buffer
	cmd := gv.command("/bin/cat", "--", p)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("reading %s in the guest: %s", p, strings.TrimSpace(stderr.String()))
	}
	w.Header().Set("Content-Length", strconv.Itoa(out.Len()))
	w.Header().Set("Content-Type", "application/octet-stream")
	_, err := w.Write(out.Bytes())
	return err
}

// --- control API ----------------------------------------------------------------------------

// controlGuest serves /_harness/guest-ops (GET: call log + processes), /_harness/guest-processes
// (GET: the running ones) and /_harness/guest-tools (POST {"vm","running"}).
func (g *guestOps) control(op string, r *http.Request, raw []byte) (int, interface{}) {
	switch op {
	case "guest-ops":
		g.mu.Lock()
		calls := append([]guestCall{}, g.calls...)
		g.mu.Unlock()
		// each Linux guest's local account (accountName): what a test checks host state against
		accounts := []map[string]interface{}{}
		g.mu.Lock()
		for _, gv := range g.vms {
			if gv.account != "" {
				accounts = append(accounts, map[string]interface{}{"vm": gv.cfg.VM, "username": gv.cfg.Username, "account": gv.account, "uid": gv.uid})
			}
		}
		g.mu.Unlock()
		return http.StatusOK, map[string]interface{}{"calls": calls, "processes": nonNil(g.processes("")), "accounts": accounts}
	case "guest-processes":
		var running []guestProc
		for _, p := range g.processes("") {
			if p.Running && alive(int(p.Pid)) {
				running = append(running, p)
			}
		}
		return http.StatusOK, map[string]interface{}{"processes": nonNil(running)}
	case "guest-tools":
		var req struct {
			VM      string `json:"vm"`
			Running *bool  `json:"running"`
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(&req); err != nil || req.VM == "" || req.Running == nil {
			return http.StatusBadRequest, map[string]string{"error": "/_harness/guest-tools needs {\"vm\": NAME, \"running\": true|false}"}
		}
		vm := findVM(req.VM)
		g.mu.Lock()
		var gv *guestVM
		if vm != nil {
			gv = g.vms[vm.Self.Value]
		}
		if gv != nil {
			gv.tools = *req.Running
		}
		g.mu.Unlock()
		if gv == nil {
			return http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("/_harness/guest-tools: %q is not a VM with a lab guest (-guest-ops)", req.VM)}
		}
		gv.publishTools(vm)
		return http.StatusOK, map[string]bool{"ok": true}
	}
	return http.StatusNotFound, map[string]string{"error": "unknown harness endpoint /_harness/" + op}
}

func nonNil(p []guestProc) []guestProc {
	if p == nil {
		return []guestProc{}
	}
	return p
}

func (g *guestOps) resetCalls() {
	g.mu.Lock()
	g.calls = nil
	g.mu.Unlock()
}
