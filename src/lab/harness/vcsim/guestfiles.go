package main

// The GuestFileManager's directory and delete methods for the lab guests (guestops.go), per the
// API reference vim.vm.guest.FileManager: MakeDirectoryInGuest ("FileAlreadyExists if the directory
// already exists", FileNotFound when a parent is missing and createParentDirectories is false),
// DeleteFileInGuest (FileNotFound, NotAFile for a directory), DeleteDirectoryInGuest (FileNotFound,
// NotADirectory, DirectoryNotEmpty unless recursive), CreateTemporaryDirectoryInGuest (a new
// directory named prefix + random + suffix in directoryPath, default the guest's temp directory).
// Linux: run as the guest user, so its permissions apply (else GuestPermissionDenied).

import (
	"crypto/rand"
	"encoding/hex"
	"io/ioutil"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// exit codes of the Linux scripts below → faults (checkAs): 3 FileNotFound, 4 FileAlreadyExists,
// 5 NotAFile, 6 GuestPermissionDenied, 7 NotADirectory, 8 DirectoryNotEmpty
func fileFault(code int, p string) types.BaseMethodFault {
	ff := types.FileFault{File: p}
	switch code {
	case 0:
		return nil
	case 3:
		return &types.FileNotFound{FileFault: ff}
	case 4:
		return &types.FileAlreadyExists{FileFault: ff}
	case 5:
		return &types.NotAFile{FileFault: ff}
	case 7:
		return &types.NotADirectory{FileFault: ff}
	case 8:
		return &types.DirectoryNotEmpty{FileFault: ff}
	default:
		return &types.GuestPermissionDenied{}
	}
}

const mkdirScript = `p=$1; [ -e "$p" ] && exit 4
d=$(dirname -- "$p")
if [ "$2" = 1 ]; then mkdir -p -- "$p" 2>/dev/null || exit 6; exit 0; fi
[ -d "$d" ] || exit 3
mkdir -- "$p" 2>/dev/null || exit 6`

const rmFileScript = `p=$1; [ -e "$p" ] || [ -L "$p" ] || exit 3
[ -d "$p" ] && exit 5
rm -f -- "$p" 2>/dev/null || exit 6
[ -e "$p" ] && exit 6; exit 0`

const rmDirScript = `p=$1; [ -e "$p" ] || exit 3
[ -d "$p" ] || exit 7
if [ "$2" = 1 ]; then rm -rf -- "$p" 2>/dev/null || exit 6
else [ -z "$(ls -A -- "$p")" ] || exit 8; rmdir -- "$p" 2>/dev/null || exit 6; fi`

func (gv *guestVM) runFileScript(script, p string, args ...string) types.BaseMethodFault {
	if !path.IsAbs(p) {
		return &types.InvalidArgument{InvalidProperty: "path"}
	}
	if f := gv.checkAs(script, p, args...); f != nil {
		// checkAs maps 3/4/5 and the rest to GuestPermissionDenied; 7 and 8 are the directory ones
		return f
	}
	return nil
}

func (gv *guestVM) mkdir(p string, parents bool) types.BaseMethodFault {
	if !gv.windows() {
		return gv.runFileScript(mkdirScript, p, boolArg(parents))
	}
	hp, err := gv.windowsPath(p)
	if err != nil {
		return &types.InvalidArgument{InvalidProperty: "directoryPath"}
	}
	if _, err := os.Stat(hp); err == nil {
		return fileFault(4, p)
	}
	if parents {
		err = os.MkdirAll(hp, 0o755)
	} else {
		if st, e := os.Stat(filepath.Dir(hp)); e != nil || !st.IsDir() {
			return fileFault(3, p)
		}
		err = os.Mkdir(hp, 0o755)
	}
	if err != nil {
		return &types.GuestPermissionDenied{}
	}
	return nil
}

func (gv *guestVM) rmFile(p string) types.BaseMethodFault {
	if !gv.windows() {
		return gv.runFileScript(rmFileScript, p)
	}
	hp, err := gv.windowsPath(p)
	if err != nil {
		return &types.InvalidArgument{InvalidProperty: "filePath"}
	}
	st, err := os.Stat(hp)
	if err != nil {
		return fileFault(3, p)
	}
	if st.IsDir() {
		return fileFault(5, p)
	}
	if os.Remove(hp) != nil {
		return &types.GuestPermissionDenied{}
	}
	return nil
}

func (gv *guestVM) rmDir(p string, recursive bool) types.BaseMethodFault {
	if !gv.windows() {
		return gv.runFileScript(rmDirScript, p, boolArg(recursive))
	}
	hp, err := gv.windowsPath(p)
	if err != nil {
		return &types.InvalidArgument{InvalidProperty: "directoryPath"}
	}
	st, err := os.Stat(hp)
	if err != nil {
		return fileFault(3, p)
	}
	if !st.IsDir() {
		return fileFault(7, p)
	}
	if recursive {
		err = os.RemoveAll(hp)
	} else {
		if entries, _ := ioutil.ReadDir(hp); len(entries) > 0 {
			return fileFault(8, p)
		}
		err = os.Remove(hp)
	}
	if err != nil {
		return &types.GuestPermissionDenied{}
	}
	return nil
}

func (gv *guestVM) tempDir(prefix, suffix, dir string) (string, types.BaseMethodFault) {
	if dir == "" {
		if gv.windows() {
			dir = gv.windowsHome() + `\AppData\Local\Temp`
		} else {
			dir = "/tmp"
		}
	}
	if strings.ContainsAny(prefix+suffix, `/\`) {
		return "", &types.InvalidArgument{InvalidProperty: "prefix"}
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := prefix + hex.EncodeToString(b) + suffix
	var p string
	if gv.windows() {
		p = strings.TrimRight(dir, `\`) + `\` + name
	} else {
		p = path.Join(dir, name)
	}
	if f := gv.mkdir(p, false); f != nil {
		if _, ok := f.(*types.FileNotFound); ok {
			return "", fileFault(3, dir)
		}
		return "", f
	}
	return p, nil
}

// MakeDirectoryInGuest: vim.vm.guest.FileManager.makeDirectory.
func (m *guestFileManager) MakeDirectoryInGuest(ctx *simulator.Context, req *types.MakeDirectoryInGuest) soap.HasFault {
	body := new(methods.MakeDirectoryInGuestBody)
	f := m.ops.authorized(req.Vm, req.Auth, func(gv *guestVM) types.BaseMethodFault {
		return gv.mkdir(req.DirectoryPath, req.CreateParentDirectories)
	})
	if body.Fault_ = m.ops.reply("MakeDirectoryInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.MakeDirectoryInGuestResponse{}
	}
	return body
}

// DeleteFileInGuest: vim.vm.guest.FileManager.deleteFile.
func (m *guestFileManager) DeleteFileInGuest(ctx *simulator.Context, req *types.DeleteFileInGuest) soap.HasFault {
	body := new(methods.DeleteFileInGuestBody)
	f := m.ops.authorized(req.Vm, req.Auth, func(gv *guestVM) types.BaseMethodFault { return gv.rmFile(req.FilePath) })
	if body.Fault_ = m.ops.reply("DeleteFileInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.DeleteFileInGuestResponse{}
	}
	return body
}

// DeleteDirectoryInGuest: vim.vm.guest.FileManager.deleteDirectory.
func (m *guestFileManager) DeleteDirectoryInGuest(ctx *simulator.Context, req *types.DeleteDirectoryInGuest) soap.HasFault {
	body := new(methods.DeleteDirectoryInGuestBody)
	f := m.ops.authorized(req.Vm, req.Auth, func(gv *guestVM) types.BaseMethodFault { return gv.rmDir(req.DirectoryPath, req.Recursive) })
	if body.Fault_ = m.ops.reply("DeleteDirectoryInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.DeleteDirectoryInGuestResponse{}
	}
	return body
}

// CreateTemporaryDirectoryInGuest: vim.vm.guest.FileManager.createTemporaryDirectory.
func (m *guestFileManager) CreateTemporaryDirectoryInGuest(ctx *simulator.Context, req *types.CreateTemporaryDirectoryInGuest) soap.HasFault {
	body := new(methods.CreateTemporaryDirectoryInGuestBody)
	gv, f := m.ops.authorize(req.Vm, req.Auth)
	p := ""
	if f == nil {
		p, f = gv.tempDir(req.Prefix, req.Suffix, req.DirectoryPath)
	}
	if body.Fault_ = m.ops.reply("CreateTemporaryDirectoryInGuest", req.Vm, f); body.Fault_ == nil {
		body.Res = &types.CreateTemporaryDirectoryInGuestResponse{Returnval: p}
	}
	return body
}
