package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const sectorSize = 512

// lunSizesGiB are the disks every host gets, so tests can pick a LUN by size deterministically.
var lunSizesGiB = []int64{8, 16, 32, 64}

// storageState is shared by all hosts: which LUN carries which VMFS volume.
type storageState struct {
	mu      sync.Mutex
	dataDir string
	// usedBy maps "<host moref>/<canonical name>" to the datastore MoRef formatted on it.
	usedBy map[string]types.ManagedObjectReference
	// vmfs maps datastore MoRef values to their volume, for mountInfo and removal.
	vmfs map[string]*vmfsVolume
}

type vmfsVolume struct {
	host     types.ManagedObjectReference
	diskName string
	dir      string
}

// datastoreSystem adds the VMFS methods vcsim 0.24 lacks. It embeds the simulator object by
// value: the property collector finds the mo.HostDatastoreSystem by walking Field(0), which a
// pointer embedding would break.
type datastoreSystem struct {
	simulator.HostDatastoreSystem

	st *storageState
}

func lunID(hostRef string, i int) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("storsweep-lab/%s/%d", hostRef, i)))
	return "6000c29" + hex.EncodeToString(sum[:])[:25]
}

func makeLuns(hostRef string) []types.HostScsiDisk {
	var disks []types.HostScsiDisk
	for i, gib := range lunSizesGiB {
		id := lunID(hostRef, i)
		name := "naa." + id
		// ESXi's ScsiLun.uuid for a VMware virtual disk: page-83 type 02 + NAA id + "Virtua".
		uuid := "0200" + fmt.Sprintf("%02x", i) + "0000" + id + "566972747561"
		disks = append(disks, types.HostScsiDisk{
			ScsiLun: types.ScsiLun{
				HostDevice: types.HostDevice{
					DeviceName: "/vmfs/devices/disks/" + name,
					DeviceType: "disk",
				},
				Key:              "key-vim.host.ScsiDisk-" + uuid,
				Uuid:             uuid,
				CanonicalName:    name,
				DisplayName:      fmt.Sprintf("VMware Serial Attached SCSI Disk (%s)", name),
				LunType:          "disk",
				Vendor:           "VMware  ",
				Model:            "Virtual disk    ",
				Revision:         "2.0 ",
				ScsiLevel:        6,
				SerialNumber:     "unavailable",
				QueueDepth:       64,
				OperationalState: []string{"ok"},
				DurableName:      &types.ScsiLunDurableName{Namespace: "NAA", NamespaceId: 3},
				VStorageSupport:  "vStorageUnsupported",
				ProtocolEndpoint: types.NewBool(false),
			},
			Capacity:     types.HostDiskDimensionsLba{BlockSize: sectorSize, Block: gib << 30 / sectorSize},
			DevicePath:   "/vmfs/devices/disks/" + name,
			Ssd:          types.NewBool(true),
			LocalDisk:    types.NewBool(false),
			ScsiDiskType: "native512",
		})
	}
	return disks
}

// installStorage gives every host its own LUNs and replaces each HostDatastoreSystem.
func (h *harness) installStorage() error {
	for _, e := range simulator.Map.All("HostSystem") {
		host, ok := e.(*simulator.HostSystem)
		if !ok {
			return fmt.Errorf("unexpected HostSystem type %T", e)
		}
		if host.Config == nil || host.Config.StorageDevice == nil {
			return fmt.Errorf("host %s has no config.storageDevice", host.Name)
		}
		// The simulator points every HostStorageSystem at one shared template; give each host
		// its own device list so LUNs and their use stay per host.
		sd := *host.Config.StorageDevice
		sd.ScsiLun = nil
		for _, l := range host.Config.StorageDevice.ScsiLun {
			sd.ScsiLun = append(sd.ScsiLun, l)
		}
		for _, d := range makeLuns(host.Self.Value) {
			disk := d
			sd.ScsiLun = append(sd.ScsiLun, &disk)
		}
		host.Config.StorageDevice = &sd
		if ss, ok := simulator.Map.Get(*host.ConfigManager.StorageSystem).(*simulator.HostStorageSystem); ok {
			ss.StorageDeviceInfo = &sd
		}

		orig, ok := simulator.Map.Get(*host.ConfigManager.DatastoreSystem).(*simulator.HostDatastoreSystem)
		if !ok {
			return fmt.Errorf("host %s: unexpected datastore system type", host.Name)
		}
		simulator.Map.Put(&datastoreSystem{HostDatastoreSystem: *orig, st: h.storage})
		h.storage.refreshMounts(host)
	}
	return nil
}

func hostOf(dss *datastoreSystem) *simulator.HostSystem {
	h, _ := simulator.Map.Get(dss.Host.Self).(*simulator.HostSystem)
	return h
}

func hostDisks(host *simulator.HostSystem) []*types.HostScsiDisk {
	var out []*types.HostScsiDisk
	for _, l := range host.Config.StorageDevice.ScsiLun {
		if d, ok := l.(*types.HostScsiDisk); ok && strings.HasPrefix(d.CanonicalName, "naa.") {
			out = append(out, d)
		}
	}
	return out
}

func (st *storageState) inUse(host *simulator.HostSystem, name string) (types.ManagedObjectReference, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ref, ok := st.usedBy[host.Self.Value+"/"+name]
	return ref, ok
}

func findDisk(host *simulator.HostSystem, match func(*types.HostScsiDisk) bool) *types.HostScsiDisk {
	for _, d := range hostDisks(host) {
		if match(d) {
			return d
		}
	}
	return nil
}

func fault(msg string, f types.BaseMethodFault) *soap.Fault {
	return simulator.Fault(msg, f)
}

func invalidArgument(prop string) *soap.Fault {
	return fault("A specified parameter was not correct: "+prop, &types.InvalidArgument{InvalidProperty: prop})
}

// rdmMapped is every LUN (by uuid and device path) that an RDM of a VM on this host refers to.
func rdmMapped(host *simulator.HostSystem) map[string]bool {
	mapped := map[string]bool{}
	for _, ref := range host.Vm {
		vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine)
		if !ok {
			continue
		}
		simulator.Map.WithLock(vm, func() {
			if vm.Config == nil {
				return
			}
			for _, d := range vm.Config.Hardware.Device {
				if disk, ok := d.(*types.VirtualDisk); ok {
					if b, ok := disk.Backing.(*types.VirtualDiskRawDiskMappingVer1BackingInfo); ok {
						mapped[b.LunUuid] = true
						mapped[b.DeviceName] = true
					}
				}
			}
		})
	}
	return mapped
}

// QueryAvailableDisksForVmfs lists the host's naa.* disks that carry no VMFS volume and that no
// RDM refers to ("It will also filter out management LUNs and disks that are referenced by RDMs",
// vSphere API reference, HostDatastoreSystem.QueryAvailableDisksForVmfs).
func (dss *datastoreSystem) QueryAvailableDisksForVmfs(ctx *simulator.Context, req *types.QueryAvailableDisksForVmfs) soap.HasFault {
	body := &methods.QueryAvailableDisksForVmfsBody{}
	host := hostOf(dss)
	if req.Datastore != nil {
		// Extent candidates of an existing datastore are the same free disks here.
		if simulator.FindReference(dss.Datastore, *req.Datastore) == nil {
			body.Fault_ = fault("datastore not found on this host", &types.NotFound{})
			return body
		}
	}
	res := &types.QueryAvailableDisksForVmfsResponse{}
	mapped := rdmMapped(host)
	for _, d := range hostDisks(host) {
		if mapped[d.Uuid] || mapped[d.DevicePath] {
			continue
		}
		if _, used := dss.st.inUse(host, d.CanonicalName); !used {
			res.Returnval = append(res.Returnval, *d)
		}
	}
	body.Res = res
	return body
}

func partitionLayout(disk *types.HostScsiDisk, major int32) (format string, start, end int64) {
	total := disk.Capacity.Block
	if major == 3 {
		// VMFS3 volumes sit in an MBR partition starting at sector 128.
		return "mbr", 128, total - 1
	}
	// GPT keeps a 33-sector backup table at the end of the disk.
	return "gpt", 2048, total - 34
}

// QueryVmfsDatastoreCreateOptions returns the single whole-disk option for devicePath.
func (dss *datastoreSystem) QueryVmfsDatastoreCreateOptions(ctx *simulator.Context, req *types.QueryVmfsDatastoreCreateOptions) soap.HasFault {
	body := &methods.QueryVmfsDatastoreCreateOptionsBody{}
	host := hostOf(dss)
	disk := findDisk(host, func(d *types.HostScsiDisk) bool { return d.DevicePath == req.DevicePath })
	if disk == nil {
		body.Fault_ = fault(fmt.Sprintf("No disk with device path %s on host %s", req.DevicePath, host.Name), &types.NotFound{})
		return body
	}
	if ds, used := dss.st.inUse(host, disk.CanonicalName); used {
		body.Fault_ = fault(fmt.Sprintf("Disk %s is in use by datastore %s", disk.CanonicalName, ds.Value), &types.HostConfigFault{})
		return body
	}
	major := labProfile.defaultVmfsMajor()
	if req.VmfsMajorVersion != 0 {
		major = req.VmfsMajorVersion
	}
	if major != 3 && major != 5 && major != 6 || !labProfile.vmfsCreatable(major) {
		// a version this release cannot format (version.go)
		body.Fault_ = unsupportedVmfs("vmfsMajorVersion")
		return body
	}
	format, start, end := partitionLayout(disk, major)
	vmfs := types.HostVmfsSpec{
		Extent:       types.HostScsiDiskPartition{DiskName: disk.CanonicalName, Partition: 1},
		MajorVersion: major,
	}
	switch major {
	case 6:
		vmfs.BlockSize = 1024
		vmfs.UnmapGranularity = 1024
		vmfs.UnmapPriority = "low"
	default:
		vmfs.BlockSizeMb = 1
	}
	lba := func(n int64) types.HostDiskDimensionsLba {
		return types.HostDiskDimensionsLba{BlockSize: sectorSize, Block: n}
	}
	rng := types.HostDiskPartitionBlockRange{Partition: 1, Type: "vmfs", Start: lba(start), End: lba(end)}
	total := lba(disk.Capacity.Block)
	body.Res = &types.QueryVmfsDatastoreCreateOptionsResponse{Returnval: []types.VmfsDatastoreOption{{
		Info: &types.VmfsDatastoreAllExtentOption{VmfsDatastoreSingleExtentOption: types.VmfsDatastoreSingleExtentOption{
			VmfsDatastoreBaseOption: types.VmfsDatastoreBaseOption{
				Layout: types.HostDiskPartitionLayout{Total: &total, Partition: []types.HostDiskPartitionBlockRange{rng}},
			},
			VmfsExtent: rng,
		}},
		Spec: &types.VmfsDatastoreCreateSpec{
			VmfsDatastoreSpec: types.VmfsDatastoreSpec{DiskUuid: disk.Uuid},
			Partition: types.HostDiskPartitionSpec{
				PartitionFormat: format,
				TotalSectors:    disk.Capacity.Block,
				Partition: []types.HostDiskPartitionAttributes{{
					Partition: 1, StartSector: start, EndSector: end, Type: "vmfs",
				}},
			},
			Vmfs: vmfs,
		},
	}}}
	return body
}

// vmfsBlockKiB validates the version/block-size pair the way the API reference documents it:
// VMFS3 1/2/4/8 MB, VMFS5 1 MB only, VMFS6 1 MB or 64 KB. It returns the block size in KiB or
// the name of the offending property.
func vmfsBlockKiB(spec types.HostVmfsSpec) (int32, string) {
	mb, kib := spec.BlockSizeMb, spec.BlockSize
	if mb != 0 && kib != 0 && mb*1024 != kib {
		return 0, "spec.vmfs.blockSize"
	}
	size := kib
	if size == 0 {
		size = mb * 1024
	}
	if size == 0 {
		size = 1024
	}
	prop := "spec.vmfs.blockSizeMb"
	if kib != 0 {
		prop = "spec.vmfs.blockSize"
	}
	switch spec.MajorVersion {
	case 3:
		if size == 1024 || size == 2048 || size == 4096 || size == 8192 {
			return size, ""
		}
	case 5:
		if size == 1024 {
			return size, ""
		}
	case 6:
		if size == 1024 || size == 64 {
			return size, ""
		}
	default:
		return 0, "spec.vmfs.majorVersion"
	}
	return 0, prop
}

// maxFileSize: VMFS3's cap depends on the block size (version.go vmfs3MaxFileSize); VMFS5/6 take
// the 62 TB virtual disk.
func maxFileSize(major int32, blockKiB int32) int64 {
	if major == 3 {
		return vmfs3MaxFileSize(blockKiB)
	}
	return 62 << 40
}

func volumeUUID(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	x := hex.EncodeToString(sum[:])
	return x[0:8] + "-" + x[8:16] + "-" + x[16:20] + "-" + x[20:32]
}

// CreateVmfsDatastore formats the LUN named by spec.vmfs.extent.diskName. Faults follow the
// API reference for this method: NotFound (no such disk), HostConfigFault (disk in use),
// DuplicateName, and InvalidArgument (a RuntimeFault) for a version/block-size pair the
// host cannot format, naming the offending property as hostd does.
func (dss *datastoreSystem) CreateVmfsDatastore(ctx *simulator.Context, req *types.CreateVmfsDatastore) soap.HasFault {
	body := &methods.CreateVmfsDatastoreBody{}
	host := hostOf(dss)
	spec := req.Spec
	if spec.Vmfs.VolumeName == "" {
		body.Fault_ = invalidArgument("spec.vmfs.volumeName")
		return body
	}
	diskName := spec.Vmfs.Extent.DiskName
	disk := findDisk(host, func(d *types.HostScsiDisk) bool { return d.CanonicalName == diskName })
	if disk == nil {
		body.Fault_ = fault(fmt.Sprintf("No disk named %q on host %s", diskName, host.Name), &types.NotFound{})
		return body
	}
	if spec.DiskUuid != "" && spec.DiskUuid != disk.Uuid {
		body.Fault_ = invalidArgument("spec.diskUuid")
		return body
	}
	if ds, used := dss.st.inUse(host, disk.CanonicalName); used {
		body.Fault_ = fault(fmt.Sprintf("Disk %s is in use by datastore %s", disk.CanonicalName, ds.Value), &types.HostConfigFault{})
		return body
	}
	if !labProfile.vmfsCreatable(spec.Vmfs.MajorVersion) {
		body.Fault_ = unsupportedVmfs("spec.vmfs.majorVersion") // version.go
		return body
	}
	blockKiB, bad := vmfsBlockKiB(spec.Vmfs)
	if bad != "" {
		body.Fault_ = invalidArgument(bad)
		return body
	}
	unmapKiB := int32(0)
	if spec.Vmfs.MajorVersion == 6 {
		// the unmap granularity follows the block size (version.go vmfsConfigOptions)
		g, ok := unmapGranularityFor(blockKiB, spec.Vmfs.UnmapGranularity)
		if !ok {
			body.Fault_ = invalidArgument("spec.vmfs.unmapGranularity")
			return body
		}
		unmapKiB = g
	}
	for _, p := range spec.Partition.Partition {
		if p.StartSector < 0 || p.EndSector <= p.StartSector || p.EndSector >= disk.Capacity.Block {
			body.Fault_ = invalidArgument("spec.partition")
			return body
		}
	}
	if e := duplicateDatastore(host, spec.Vmfs.VolumeName); e != nil {
		body.Fault_ = fault(spec.Vmfs.VolumeName, &types.DuplicateName{Name: spec.Vmfs.VolumeName, Object: e.Reference()})
		return body
	}

	dir := filepath.Join(dss.st.dataDir, "vmfs", host.Self.Value, disk.CanonicalName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		body.Fault_ = fault(err.Error(), &types.HostConfigFault{})
		return body
	}
	res := dss.HostDatastoreSystem.CreateLocalDatastore(ctx, &types.CreateLocalDatastore{
		This: dss.Self, Name: spec.Vmfs.VolumeName, Path: dir,
	})
	if f := res.Fault(); f != nil {
		body.Fault_ = f
		return body
	}
	ref := res.(*methods.CreateLocalDatastoreBody).Res.Returnval
	ds := simulator.Map.Get(ref).(*simulator.Datastore)

	capacity := disk.Capacity.Block * sectorSize
	major := spec.Vmfs.MajorVersion
	version := map[int32]string{3: "3.60", 5: "5.81", 6: "6.82"}[major]
	blockMb := blockKiB / 1024
	if blockMb == 0 {
		blockMb = 1 // hostd reports 1 in the deprecated field for 64 KiB VMFS6 volumes too
	}
	vol := &types.HostVmfsVolume{
		HostFileSystemVolume: types.HostFileSystemVolume{Type: "VMFS", Name: spec.Vmfs.VolumeName, Capacity: capacity},
		BlockSizeMb:          blockMb,
		BlockSize:            blockKiB,
		MaxBlocks:            int32(capacity / (int64(blockKiB) * 1024)),
		MajorVersion:         major,
		Version:              version,
		Uuid:                 volumeUUID(host.Self.Value + "/" + disk.CanonicalName + "/" + spec.Vmfs.VolumeName),
		Extent:               []types.HostScsiDiskPartition{{DiskName: disk.CanonicalName, Partition: 1}},
		Ssd:                  disk.Ssd,
		Local:                types.NewBool(false),
		ScsiDiskType:         disk.ScsiDiskType,
	}
	if major == 6 {
		vol.UnmapGranularity = unmapKiB
		vol.UnmapPriority = spec.Vmfs.UnmapPriority
		if vol.UnmapPriority == "" {
			vol.UnmapPriority = "low"
		}
	}
	// Volume metadata (.sf files, journal) takes a few hundred MB on a real VMFS.
	free := capacity - 700<<20
	simulator.Map.WithLock(ds, func() {
		ds.Summary.Type = "VMFS"
		ds.Summary.Capacity = capacity
		ds.Summary.FreeSpace = free
		ds.Summary.MultipleHostAccess = types.NewBool(false)
		ds.Capability.RawDiskMappingsSupported = true
		for i := range ds.Host {
			ds.Host[i].MountInfo.Path = "/vmfs/volumes/" + vol.Uuid
		}
		ds.Info = &types.VmfsDatastoreInfo{
			DatastoreInfo: types.DatastoreInfo{
				Name:                   spec.Vmfs.VolumeName,
				Url:                    dir,
				FreeSpace:              free,
				MaxFileSize:            maxFileSize(major, blockKiB),
				MaxVirtualDiskCapacity: maxFileSize(major, blockKiB),
				MaxMemoryFileSize:      maxFileSize(major, blockKiB),
				ContainerId:            vol.Uuid,
			},
			MaxPhysicalRDMFileSize: 64 << 40,
			MaxVirtualRDMFileSize:  62 << 40,
			Vmfs:                   vol,
		}
	})

	dss.st.mu.Lock()
	dss.st.usedBy[host.Self.Value+"/"+disk.CanonicalName] = ref
	dss.st.vmfs[ref.Value] = &vmfsVolume{host: host.Self, diskName: disk.CanonicalName, dir: dir}
	dss.st.mu.Unlock()
	dss.st.refreshMounts(host)

	body.Res = &types.CreateVmfsDatastoreResponse{Returnval: ref}
	return body
}

// CreateNasDatastore follows the API (localPath is the datastore name; the simulator insists
// on an existing local directory instead): the share is backed by a directory per server:path.
func (dss *datastoreSystem) CreateNasDatastore(ctx *simulator.Context, req *types.CreateNasDatastore) soap.HasFault {
	body := &methods.CreateNasDatastoreBody{}
	host := hostOf(dss)
	spec := req.Spec
	if spec.LocalPath == "" || strings.Contains(spec.LocalPath, "/") {
		body.Fault_ = invalidArgument("spec.localPath")
		return body
	}
	if spec.RemoteHost == "" && len(spec.RemoteHostNames) == 0 {
		body.Fault_ = invalidArgument("spec.remoteHost")
		return body
	}
	if spec.RemotePath == "" {
		body.Fault_ = invalidArgument("spec.remotePath")
		return body
	}
	kind := spec.Type
	if kind == "" {
		kind = "NFS"
	}
	if kind != "NFS" && kind != "NFS41" && kind != "CIFS" {
		body.Fault_ = invalidArgument("spec.type")
		return body
	}
	if e := duplicateDatastore(host, spec.LocalPath); e != nil {
		// vCenter joins a host to an existing NFS datastore of the same export and name.
		if ds, ok := e.(*simulator.Datastore); ok && sameExport(ds, spec) && simulator.FindReference(dss.Datastore, ds.Self) == nil {
			simulator.Map.WithLock(ds, func() {
				ds.Host = append(ds.Host, types.DatastoreHostMount{Key: host.Self, MountInfo: types.HostMountInfo{
					Path: ds.Summary.Url, AccessMode: "readWrite", Mounted: types.NewBool(true), Accessible: types.NewBool(true),
				}})
			})
			dss.Datastore = append(dss.Datastore, ds.Self)
			simulator.Map.WithLock(host, func() { dss.Host.Datastore = dss.Datastore })
			dss.st.refreshMounts(host)
			body.Res = &types.CreateNasDatastoreResponse{Returnval: ds.Self}
			return body
		}
		body.Fault_ = fault(spec.LocalPath, &types.DuplicateName{Name: spec.LocalPath, Object: e.Reference()})
		return body
	}
	remote := spec.RemoteHost
	if remote == "" {
		remote = strings.Join(spec.RemoteHostNames, ",")
	}
	dir := filepath.Join(dss.st.dataDir, "nfs", remote, filepath.Clean("/"+spec.RemotePath))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		body.Fault_ = fault(err.Error(), &types.HostConfigFault{})
		return body
	}
	res := dss.HostDatastoreSystem.CreateLocalDatastore(ctx, &types.CreateLocalDatastore{
		This: dss.Self, Name: spec.LocalPath, Path: dir,
	})
	if f := res.Fault(); f != nil {
		body.Fault_ = f
		return body
	}
	ref := res.(*methods.CreateLocalDatastoreBody).Res.Returnval
	ds := simulator.Map.Get(ref).(*simulator.Datastore)
	access := spec.AccessMode
	if access == "" {
		access = "readWrite"
	}
	simulator.Map.WithLock(ds, func() {
		ds.Summary.Type = kind
		ds.Summary.MultipleHostAccess = types.NewBool(true)
		ds.Info = &types.NasDatastoreInfo{
			DatastoreInfo: types.DatastoreInfo{
				Name: spec.LocalPath, Url: dir, FreeSpace: ds.Summary.FreeSpace,
				MaxFileSize: ds.Summary.FreeSpace, MaxMemoryFileSize: ds.Summary.FreeSpace,
			},
			Nas: &types.HostNasVolume{
				HostFileSystemVolume: types.HostFileSystemVolume{Type: kind, Name: spec.LocalPath, Capacity: ds.Summary.Capacity},
				RemoteHost:           spec.RemoteHost,
				RemotePath:           spec.RemotePath,
				UserName:             spec.UserName,
				RemoteHostNames:      spec.RemoteHostNames,
				SecurityType:         spec.SecurityType,
			},
		}
		if len(ds.Host) > 0 {
			ds.Host[0].MountInfo.AccessMode = access
		}
	})
	dss.st.refreshMounts(host)
	body.Res = &types.CreateNasDatastoreResponse{Returnval: ref}
	return body
}

func sameExport(ds *simulator.Datastore, spec types.HostNasVolumeSpec) bool {
	nas, ok := ds.Info.(*types.NasDatastoreInfo)
	return ok && nas.Nas != nil && nas.Nas.RemoteHost == spec.RemoteHost && nas.Nas.RemotePath == spec.RemotePath
}

func duplicateDatastore(host *simulator.HostSystem, name string) mo.Entity {
	// Datastore names are unique per datacenter on vCenter.
	var parent mo.Reference = host
	for i := 0; i < 16 && parent != nil; i++ {
		if dc, ok := parent.(*simulator.Datacenter); ok {
			return simulator.Map.FindByName(name, dc.Datastore)
		}
		e, ok := parent.(mo.Entity)
		if !ok || e.Entity().Parent == nil {
			break
		}
		parent = simulator.Map.Get(*e.Entity().Parent)
	}
	return simulator.Map.FindByName(name, host.Datastore)
}

// vmsUsing reports VMs with files on the datastore; RemoveDatastore refuses those like hostd.
func vmsUsing(ds *simulator.Datastore) []string {
	var names []string
	for _, e := range simulator.Map.All("VirtualMachine") {
		vm, ok := e.(*simulator.VirtualMachine)
		if !ok {
			continue
		}
		if vm.Config == nil {
			continue
		}
		// vcsim adds to vm.Datastore/ds.Vm when a disk is created but never prunes them when it
		// is removed, so those lists over-report; the VM's own files and disk backings do not.
		if strings.HasPrefix(vm.Config.Files.VmPathName, "["+ds.Name+"]") {
			names = append(names, vm.Name)
			continue
		}
		for _, d := range vm.Config.Hardware.Device {
			if b, ok := d.GetVirtualDevice().Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
				if strings.HasPrefix(b.GetVirtualDeviceFileBackingInfo().FileName, "["+ds.Name+"]") {
					names = append(names, vm.Name)
					break
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// RemoveDatastore unmounts an NFS datastore from this host, or deletes a VMFS volume and
// frees its LUN. Faults as documented: NotFound, ResourceInUse, HostConfigFault.
func (dss *datastoreSystem) RemoveDatastore(ctx *simulator.Context, req *types.RemoveDatastore) soap.HasFault {
	body := &methods.RemoveDatastoreBody{}
	host := hostOf(dss)
	if simulator.FindReference(dss.Datastore, req.Datastore) == nil {
		body.Fault_ = fault(fmt.Sprintf("Datastore %s is not mounted on host %s", req.Datastore.Value, host.Name), &types.NotFound{})
		return body
	}
	ds, ok := simulator.Map.Get(req.Datastore).(*simulator.Datastore)
	if !ok {
		body.Fault_ = fault("datastore not found", &types.NotFound{})
		return body
	}
	if users := vmsUsing(ds); len(users) > 0 {
		body.Fault_ = fault(fmt.Sprintf("The resource '%s' is in use by %s", ds.Name, strings.Join(users, ", ")),
			&types.ResourceInUse{Type: "Datastore", Name: ds.Name})
		return body
	}
	// No VM has files here any more; drop the stale references vcsim keeps (see vmsUsing) so
	// no VM points at the destroyed datastore afterwards.
	for _, e := range simulator.Map.All("VirtualMachine") {
		if vm, ok := e.(*simulator.VirtualMachine); ok {
			simulator.Map.WithLock(vm, func() {
				var refs []types.ManagedObjectReference
				for _, r := range vm.Datastore {
					if r != ds.Self {
						refs = append(refs, r)
					}
				}
				vm.Datastore = refs
				if vm.LayoutEx != nil {
					// vcsim keeps layout entries of destroyed disks and resolves their datastore on
					// every later reconfigure; a file on a removed datastore would panic there.
					var files []types.VirtualMachineFileLayoutExFileInfo
					for _, f := range vm.LayoutEx.File {
						if !strings.HasPrefix(f.Name, "["+ds.Name+"]") {
							files = append(files, f)
						}
					}
					vm.LayoutEx.File = files
				}
			})
		}
	}
	simulator.Map.WithLock(ds, func() { ds.Vm = nil })

	// vcsim aliases HostSystem.datastore and HostDatastoreSystem.datastore and removes
	// references in place, so compute the remaining list up front, as a fresh slice.
	var keep []types.ManagedObjectReference
	for _, r := range dss.Datastore {
		if r != ds.Self {
			keep = append(keep, r)
		}
	}
	if len(ds.Host) > 1 {
		// Shared (NFS) datastore: unmount from this host only.
		simulator.Map.WithLock(ds, func() {
			var mounts []types.DatastoreHostMount
			for _, m := range ds.Host {
				if m.Key != host.Self {
					mounts = append(mounts, m)
				}
			}
			ds.Host = mounts
		})
	} else {
		res := ds.DestroyTask(ctx, &types.Destroy_Task{This: ds.Self})
		taskRef := res.(*methods.Destroy_TaskBody).Res.Returnval
		if t, ok := simulator.Map.Get(taskRef).(*simulator.Task); ok && t.Info.Error != nil {
			body.Fault_ = fault(t.Info.Error.LocalizedMessage, t.Info.Error.Fault)
			return body
		}
	}
	dss.Datastore = keep
	simulator.Map.WithLock(host, func() { dss.Host.Datastore = keep })

	dss.st.mu.Lock()
	if v, ok := dss.st.vmfs[ds.Self.Value]; ok && v.host == host.Self {
		delete(dss.st.usedBy, host.Self.Value+"/"+v.diskName)
		delete(dss.st.vmfs, ds.Self.Value)
		_ = os.RemoveAll(v.dir)
	}
	dss.st.mu.Unlock()
	dss.st.refreshMounts(host)

	body.Res = &types.RemoveDatastoreResponse{}
	return body
}

// refreshMounts rebuilds HostStorageSystem.fileSystemVolumeInfo (and the host's
// config.fileSystemVolume) from the datastores mounted on the host.
func (st *storageState) refreshMounts(host *simulator.HostSystem) {
	info := &types.HostFileSystemVolumeInfo{VolumeTypeList: []string{"VMFS", "NFS", "NFS41", "vsan", "VVOL", "VFFS", "OTHER", "PMEM"}}
	for _, ref := range host.Datastore {
		ds, ok := simulator.Map.Get(ref).(*simulator.Datastore)
		if !ok {
			continue
		}
		mount := types.HostFileSystemMountInfo{MountInfo: types.HostMountInfo{
			Path: ds.Summary.Url, AccessMode: "readWrite", Mounted: types.NewBool(true), Accessible: types.NewBool(true),
		}}
		switch v := ds.Info.(type) {
		case *types.VmfsDatastoreInfo:
			mount.MountInfo.Path = "/vmfs/volumes/" + v.Vmfs.Uuid
			mount.Volume = v.Vmfs
		case *types.NasDatastoreInfo:
			mount.Volume = v.Nas
		default:
			mount.Volume = &types.HostFileSystemVolume{Type: ds.Summary.Type, Name: ds.Name, Capacity: ds.Summary.Capacity}
		}
		info.MountInfo = append(info.MountInfo, mount)
	}
	ss, ok := simulator.Map.Get(*host.ConfigManager.StorageSystem).(*simulator.HostStorageSystem)
	if ok {
		simulator.Map.WithLock(ss, func() { ss.FileSystemVolumeInfo = *info })
	}
	simulator.Map.WithLock(host, func() {
		if host.Config != nil {
			host.Config.FileSystemVolume = info
		}
	})
}
