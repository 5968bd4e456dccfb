package main

// Version profiles: `-version 5.5|6.7|7.0|8.0` makes the simulator report that vSphere release
// (ServiceContent.about, every HostSystem's config.product and summary.config.product) and enforce
// that release's VMFS rules in the storage methods (storage.go calls the checks below). The build
// numbers are those releases' GA builds; only version and apiVersion drive behaviour.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type versionProfile struct {
	Name       string // as given to -version
	Major      int
	Minor      int
	Version    string // AboutInfo.version
	EsxBuild   string
	VcBuild    string
	APIVersion string
}

var versionProfiles = map[string]versionProfile{
	"5.5": {Name: "5.5", Major: 5, Minor: 5, Version: "5.5.0", EsxBuild: "1331820", VcBuild: "1312298", APIVersion: "5.5"},
	"6.7": {Name: "6.7", Major: 6, Minor: 7, Version: "6.7.0", EsxBuild: "8169922", VcBuild: "8217866", APIVersion: "6.7"},
	"7.0": {Name: "7.0", Major: 7, Minor: 0, Version: "7.0.0", EsxBuild: "15843807", VcBuild: "15952498", APIVersion: "7.0.0.0"},
	"8.0": {Name: "8.0", Major: 8, Minor: 0, Version: "8.0.0", EsxBuild: "20513097", VcBuild: "20519528", APIVersion: "8.0.0.0"},
}

// labProfile is the release this process simulates (set once in main before the model exists).
var labProfile = versionProfiles["8.0"]

func profileNames() string {
	var names []string
	for n := range versionProfiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func (p versionProfile) atLeast(major, minor int) bool {
	return p.Major > major || (p.Major == major && p.Minor >= minor)
}

// vmfsCreatable says whether this release can format a new VMFS of that major version.
//   - VMFS3: "You can continue to use existing VMFS3 datastores, but you cannot create new ones"
//     from ESXi 6.0 on (vSphere 6.0 Storage, "Understanding VMFS Datastores", host-access table);
//     6.7/7.0/8.0 list VMFS3 as not supported (vSphere 6.7/7.0 Storage, "Versions of VMFS
//     Datastores"). ESXi 5.x creates it (`vmkfstools -C vmfs3`).
//   - VMFS5: every release here (5.0 introduced it; 8.0 still lists it read-write).
//   - VMFS6: ESXi 6.5 and later only; "Access for ESXi hosts version 6.0 and earlier: No"
//     (vSphere 7.0 Storage, "Versions of VMFS Datastores", table "Comparing VMFS5 and VMFS6").
func (p versionProfile) vmfsCreatable(major int32) bool {
	switch major {
	case 3:
		return !p.atLeast(6, 0)
	case 5:
		return true
	case 6:
		return p.atLeast(6, 5)
	}
	return false
}

// defaultVmfsMajor is what QueryVmfsDatastoreCreateOptions picks without vmfsMajorVersion: "the
// highest supported one" (vSphere API reference, HostDatastoreSystem.QueryVmfsDatastoreCreateOptions).
func (p versionProfile) defaultVmfsMajor() int32 {
	if p.vmfsCreatable(6) {
		return 6
	}
	return 5
}

// creatableList names the VMFS versions this release formats, for fault messages.
func (p versionProfile) creatableList() string {
	var out []string
	for _, v := range []int32{3, 5, 6} {
		if p.vmfsCreatable(v) {
			out = append(out, fmt.Sprintf("VMFS%d", v))
		}
	}
	return strings.Join(out, ", ")
}

// unsupportedVmfs is the fault for a VMFS version this release cannot create. vCenter 6.7 answers
// CreateVmfsDatastore with majorVersion it cannot honour by InvalidArgument,
// "A specified parameter was not correct: spec.vmfs.majorVersion" (reported in
// sodafoundation/nbp issue #305, vCenter 6.7.0 build 14368061); the API reference lists
// InvalidArgument among the faults of HostStorageSystem.FormatVmfs "for bad version".
func unsupportedVmfs(prop string) *soap.Fault {
	return invalidArgument(prop)
}

// vmfs3MaxFileSize is VMFS3's largest file per file block size (vSphere 4.1 Configuration
// Maximums: 1 MB block → 256 GB, 2 MB → 512 GB, 4 MB → 1 TB, 8 MB → 2 TB minus 512 B). VMFS3
// addresses 2^18 file blocks per file; the 8 MB case is capped by the 2 TB − 512 B virtual disk limit.
func vmfs3MaxFileSize(blockKiB int32) int64 {
	size := int64(blockKiB) * 1024 << 18
	if limit := int64(2<<40) - 512; size > limit {
		return limit
	}
	return size
}

// vmfsConfigOptions is QueryVmfsConfigOption's answer: one element per VMFS6 block size, each with
// the unmap granularities that block size takes (vSphere API reference, VmfsConfigOption:
// blockSizeOption and unmapGranularityOption in KB). The unmap granularity follows the file block
// size: a 64 KB volume reclaims in 64 KB units, a 1 MB one in 1 MB units.
func vmfsConfigOptions() []types.VmfsConfigOption {
	return []types.VmfsConfigOption{
		{BlockSizeOption: 64, UnmapGranularityOption: []int32{64}},
		{BlockSizeOption: 1024, UnmapGranularityOption: []int32{1024}},
	}
}

// unmapGranularityFor is the granularity a VMFS6 volume of that block size is created with, and
// whether `asked` (0 = default) is one the host takes for it.
func unmapGranularityFor(blockKiB, asked int32) (int32, bool) {
	for _, o := range vmfsConfigOptions() {
		if o.BlockSizeOption != blockKiB {
			continue
		}
		if asked == 0 {
			return o.UnmapGranularityOption[0], true
		}
		for _, g := range o.UnmapGranularityOption {
			if g == asked {
				return g, true
			}
		}
		return 0, false
	}
	return 0, false
}

// QueryVmfsConfigOption exists since vSphere API 6.5; an older host has no such method, and a SOAP
// server answers an unknown method with MethodNotFound (vmodl.fault.MethodNotFound: receiver, method).
func (dss *datastoreSystem) QueryVmfsConfigOption(ctx *simulator.Context, req *types.QueryVmfsConfigOption) soap.HasFault {
	body := &methods.QueryVmfsConfigOptionBody{}
	if !labProfile.atLeast(6, 5) {
		body.Fault_ = fault(fmt.Sprintf("Method QueryVmfsConfigOption not found on %s:%s", dss.Self.Type, dss.Self.Value),
			&types.MethodNotFound{Receiver: dss.Self, Method: "QueryVmfsConfigOption"})
		return body
	}
	body.Res = &types.QueryVmfsConfigOptionResponse{Returnval: vmfsConfigOptions()}
	return body
}

// applyVersionProfile sets what a client reads to learn the release: ServiceContent.about (vCenter
// or, with -esx, the host agent) and each host's config.product / summary.config.product
// (vSphere API reference, AboutInfo; HostConfigInfo.product; HostListSummaryConfigSummary.product).
func applyVersionProfile(p versionProfile, esx bool) error {
	si, ok := simulator.Map.Get(vim25.ServiceInstance).(*simulator.ServiceInstance)
	if !ok {
		return fmt.Errorf("no ServiceInstance in the simulator model")
	}
	host := types.AboutInfo{
		Name: "VMware ESXi", FullName: fmt.Sprintf("VMware ESXi %s build-%s", p.Version, p.EsxBuild),
		Vendor: "VMware, Inc.", Version: p.Version, Build: p.EsxBuild, LocaleVersion: "INTL", LocaleBuild: "000",
		OsType: "vmnix-x86", ProductLineId: "embeddedEsx", ApiType: "HostAgent", ApiVersion: p.APIVersion,
		LicenseProductName: "VMware ESX Server", LicenseProductVersion: fmt.Sprintf("%d.0", p.Major),
	}
	if esx {
		about := host
		about.InstanceUuid = si.Content.About.InstanceUuid
		si.Content.About = about
	} else {
		about := si.Content.About
		about.FullName = fmt.Sprintf("VMware vCenter Server %s build-%s", p.Version, p.VcBuild)
		about.Version, about.Build, about.ApiVersion = p.Version, p.VcBuild, p.APIVersion
		about.LicenseProductVersion = fmt.Sprintf("%d.0", p.Major)
		si.Content.About = about
	}
	for _, e := range simulator.Map.All("HostSystem") {
		hs, ok := e.(*simulator.HostSystem)
		if !ok {
			continue
		}
		own := host // each host its own copy: the simulator's summary points at one shared template
		simulator.Map.WithLock(hs, func() {
			if hs.Config != nil {
				hs.Config.Product = own
			}
			hs.Summary.Config.Product = &own
		})
	}
	setVmHardwareVersions(p.Major, p.Minor) // controllers.go
	return nil
}

// setVersionProfile switches the simulated release (the /_harness/version control call), so one
// simulator can serve tests of several releases.
func setVersionProfile(name string, esx bool) error {
	p, ok := versionProfiles[name]
	if !ok {
		return fmt.Errorf("version %q: expected one of %s", name, profileNames())
	}
	labProfile = p
	return applyVersionProfile(p, esx)
}
