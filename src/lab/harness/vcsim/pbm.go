package main

// The lab's Storage Policy Based Management (SPBM) endpoint, /pbm. govmomi 0.24 ships a PBM
// simulator (pbm/simulator) with vCenter 6.7's default policies, but it answers neither
// PbmCheckCompliance nor PbmQueryMatchingHub and filters no hub in PbmCheckRequirements ("TODO:
// filter"), and it takes any request without a session. This file serves /pbm itself, with the
// rules a vCenter applies:
//
//   - Sessions: a PBM client authenticates with the vCenter session of its vim25 login, sent as the
//     SOAP header element vcSessionCookie (govmomi vim25/soap Header.Cookie "vcSessionCookie ... can
//     be used with other SDK endpoints (e.g. pbm)"; pyVmomi and oslo.vmware's pbm client set the same
//     header). An HTTP cookie alone is not taken. PbmRetrieveServiceContent needs none, like vim25's
//     RetrieveServiceContent (unverified for PBM). pyVmomi's stub uses the path /pbm/sdk: both serve.
//   - Policies: REQUIREMENT profiles of resource type STORAGE (PbmQueryProfile, PbmRetrieveContent
//     with InvalidArgument(profileId) for an unknown id, as govmomi's simulator).
//   - Placement (PbmQueryMatchingHub, API reference: "the hubs that match the profile"; without
//     hubsToSearch every datastore): a datastore matches a policy when it satisfies every rule:
//     the VSAN namespace needs a vSAN datastore, PMem a PMem one, a tag rule
//     (http://www.vmware.com/storage/tag) a datastore carrying one of the rule's tags. The lab
//     tags every datastore "storsweep-tier: gold" (labDatastoreTags); no lab datastore is vSAN.
//     Policies: vSAN Default Storage Policy, storsweep-gold, storsweep-silver-or-gold, storsweep-platinum.
//   - Association: the `profile` (VirtualMachineDefinedProfileSpec.profileId) of a disk added by
//     ReconfigVM_Task is kept by SPBM, not in the VM's configuration (API reference of
//     VirtualMachineDefinedProfileSpec: "Neither the association nor the policy data is persisted in
//     Virtual Machine configuration"); PbmQueryAssociatedProfile returns it for the entity
//     {objectType virtualDiskId, key "<vm>:<device key>"}. A profileId SPBM does not know fails the
//     task with InvalidArgument(profile) (the exact fault of a real vCenter is unverified).
//   - Compliance (PbmCheckCompliance): per entity, compliant when the disk's datastore matches its
//     policy, nonCompliant when it does not (the disk is created anyway: vCenter applies a policy
//     and reports non-compliance rather than refusing, which is why a client checks placement first),
//     notApplicable when the disk has no policy (PbmComplianceStatus enum).

import (
	"bytes"
	"fmt"
	"io/ioutil"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/pbm"
	pbmmethods "github.com/vmware/govmomi/pbm/methods"
	pbmtypes "github.com/vmware/govmomi/pbm/types"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

const tagNamespace = "http://www.vmware.com/storage/tag"

// labDatastoreTags: the tags (category → tag) every lab datastore carries for tag-based placement.
var labDatastoreTags = map[string]string{"storsweep-tier": "gold"}

var pbmContent = pbmtypes.PbmServiceInstanceContent{
	AboutInfo:                 pbmtypes.PbmAboutInfo{Name: "PBM", Version: "2.0", InstanceUuid: "5a1e7c3a-8f0e-4a55-9d53-7b1b2c0b9a11"},
	SessionManager:            types.ManagedObjectReference{Type: "PbmSessionManager", Value: "SessionManager"},
	ProfileManager:            types.ManagedObjectReference{Type: "PbmProfileProfileManager", Value: "ProfileManager"},
	ComplianceManager:         types.ManagedObjectReference{Type: "PbmComplianceManager", Value: "complianceManager"},
	PlacementSolver:           types.ManagedObjectReference{Type: "PbmPlacementSolver", Value: "placementSolver"},
	CapabilityMetadataManager: types.ManagedObjectReference{Type: "PbmCapabilityMetadataManager", Value: "CapabilityMetadataManager"},
}

func capability(ns, id string, props ...pbmtypes.PbmCapabilityPropertyInstance) pbmtypes.PbmCapabilityInstance {
	return pbmtypes.PbmCapabilityInstance{
		Id:         pbmtypes.PbmCapabilityMetadataUniqueId{Namespace: ns, Id: id},
		Constraint: []pbmtypes.PbmCapabilityConstraintInstance{{PropertyInstance: props}},
	}
}

func policy(id, name, desc string, caps ...pbmtypes.PbmCapabilityInstance) *pbmtypes.PbmCapabilityProfile {
	now := time.Now()
	return &pbmtypes.PbmCapabilityProfile{
		PbmProfile:      pbmtypes.PbmProfile{ProfileId: pbmtypes.PbmProfileId{UniqueId: id}, Name: name, Description: desc, CreationTime: now, CreatedBy: "storsweep lab", LastUpdatedTime: now, LastUpdatedBy: "storsweep lab"},
		ProfileCategory: "REQUIREMENT",
		ResourceType:    pbmtypes.PbmProfileResourceType{ResourceType: "STORAGE"},
		Constraints:     &pbmtypes.PbmCapabilitySubProfileConstraints{SubProfiles: []pbmtypes.PbmCapabilitySubProfile{{Name: name + " rules", Capability: caps}}},
	}
}

func tagRule(category string, tags ...string) pbmtypes.PbmCapabilityInstance {
	values := make([]types.AnyType, len(tags))
	for i, t := range tags {
		values[i] = t
	}
	return capability(tagNamespace, category, pbmtypes.PbmCapabilityPropertyInstance{Id: "com.vmware.storage.tag." + category + ".property", Value: pbmtypes.PbmCapabilityDiscreteSet{Values: values}})
}

// labPolicies: vCenter's vSAN default (captured from vCenter 6.7 in govmomi's pbm simulator) and
// three tag-based policies; the lab's datastores (tier gold) satisfy gold and silver-or-gold, not platinum.
func labPolicies() []*pbmtypes.PbmCapabilityProfile {
	i32 := func(id string, v int32) pbmtypes.PbmCapabilityPropertyInstance {
		return pbmtypes.PbmCapabilityPropertyInstance{Id: id, Value: v}
	}
	return []*pbmtypes.PbmCapabilityProfile{
		policy("aa6d5a82-1c88-45da-85d3-3d74b91a5bad", "vSAN Default Storage Policy", "Storage policy used as default for vSAN datastores",
			capability("VSAN", "hostFailuresToTolerate", i32("hostFailuresToTolerate", 1)), capability("VSAN", "stripeWidth", i32("stripeWidth", 1))),
		policy("0b5c6f3e-2d1a-4c8e-9f47-1f6d2e3a4b01", "storsweep-gold", "Datastores tagged storsweep-tier gold", tagRule("storsweep-tier", "gold")),
		policy("0b5c6f3e-2d1a-4c8e-9f47-1f6d2e3a4b03", "storsweep-silver-or-gold", "Datastores tagged storsweep-tier silver or gold", tagRule("storsweep-tier", "silver", "gold")),
		policy("0b5c6f3e-2d1a-4c8e-9f47-1f6d2e3a4b02", "storsweep-platinum", "Datastores tagged storsweep-tier platinum", tagRule("storsweep-tier", "platinum")),
	}
}

type pbmState struct {
	mu       sync.Mutex
	policies []*pbmtypes.PbmCapabilityProfile
	// disk file ("[ds] path.vmdk") → profile id, set by ReconfigVM_Task add, dropped by remove
	assoc map[string]string
}

var pbmLab = &pbmState{policies: labPolicies(), assoc: map[string]string{}}

func (s *pbmState) find(id string) *pbmtypes.PbmCapabilityProfile {
	for _, p := range s.policies {
		if p.ProfileId.UniqueId == id {
			return p
		}
	}
	return nil
}

// matches: whether datastore ds satisfies every rule of p ("" when it does, else why not).
func matches(p *pbmtypes.PbmCapabilityProfile, ds *simulator.Datastore) string {
	sub, ok := p.Constraints.(*pbmtypes.PbmCapabilitySubProfileConstraints)
	if !ok {
		return ""
	}
	for _, sp := range sub.SubProfiles {
		for _, c := range sp.Capability {
			switch c.Id.Namespace {
			case "VSAN":
				if !strings.EqualFold(ds.Summary.Type, "vsan") {
					return fmt.Sprintf("%s is %s, not vSAN", ds.Name, ds.Summary.Type)
				}
			case "PMem":
				if !strings.EqualFold(ds.Summary.Type, "PMEM") {
					return fmt.Sprintf("%s is %s, not PMem", ds.Name, ds.Summary.Type)
				}
			case tagNamespace:
				if !tagMatches(c, labDatastoreTags[c.Id.Id]) {
					return fmt.Sprintf("%s carries no %s tag the rule names", ds.Name, c.Id.Id)
				}
			}
		}
	}
	return ""
}

func tagMatches(c pbmtypes.PbmCapabilityInstance, has string) bool {
	for _, ci := range c.Constraint {
		for _, pi := range ci.PropertyInstance {
			if set, ok := pi.Value.(pbmtypes.PbmCapabilityDiscreteSet); ok {
				for _, v := range set.Values {
					if v == has && has != "" {
						return true
					}
				}
			}
		}
	}
	return false
}

// recordProfiles: a ReconfigVM_Task's disk policies (before the simulator runs it). Returns the
// fault for a profile id SPBM does not know.
func (s *pbmState) recordProfiles(req *types.ReconfigVM_Task) types.BaseMethodFault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range req.Spec.DeviceChange {
		spec := ch.GetVirtualDeviceConfigSpec()
		disk, ok := spec.Device.(*types.VirtualDisk)
		if !ok {
			continue
		}
		b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo)
		if !ok {
			continue
		}
		file := b.GetVirtualDeviceFileBackingInfo().FileName
		if spec.Operation == types.VirtualDeviceConfigSpecOperationRemove {
			delete(s.assoc, file)
			continue
		}
		for _, p := range spec.Profile {
			if d, ok := p.(*types.VirtualMachineDefinedProfileSpec); ok {
				if s.find(d.ProfileId) == nil {
					return &types.InvalidArgument{InvalidProperty: "profile"}
				}
				s.assoc[file] = d.ProfileId
			}
		}
	}
	return nil
}

// diskOf: the VM disk an entity names ("<vm>:<device key>") and its datastore.
func diskOf(key string) (*types.VirtualDisk, *simulator.Datastore) {
	i := strings.LastIndex(key, ":")
	if i < 0 {
		return nil, nil
	}
	dk, err := strconv.Atoi(key[i+1:])
	if err != nil {
		return nil, nil
	}
	vm, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "VirtualMachine", Value: key[:i]}).(*simulator.VirtualMachine)
	if !ok || vm.Config == nil {
		return nil, nil
	}
	for _, d := range vm.Config.Hardware.Device {
		disk, ok := d.(*types.VirtualDisk)
		if !ok || disk.Key != int32(dk) {
			continue
		}
		b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo)
		if !ok {
			return disk, nil
		}
		bi := b.GetVirtualDeviceFileBackingInfo()
		if bi.Datastore != nil {
			ds, _ := simulator.Map.Get(*bi.Datastore).(*simulator.Datastore)
			return disk, ds
		}
		return disk, nil
	}
	return nil, nil
}

func (s *pbmState) profileOfDisk(disk *types.VirtualDisk) string {
	b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo)
	if !ok {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.assoc[b.GetVirtualDeviceFileBackingInfo().FileName]
}

var (
	reCookie = regexp.MustCompile(`<(?:[\w.-]+:)?vcSessionCookie>([^<]*)</(?:[\w.-]+:)?vcSessionCookie>`)
	reMethod = regexp.MustCompile(`<(?:[\w.-]+:)?Body[^>]*>\s*<(?:[\w.-]+:)?(\w+)`)
)

// servePbm: /pbm and /pbm/sdk. The session comes from the vcSessionCookie header only; the call
// is logged like every /sdk call.
func (h *harness) servePbm(w http.ResponseWriter, r *http.Request) {
	body, err := ioutil.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	name := ""
	if m := reMethod.FindSubmatch(body); m != nil {
		name = string(m[1])
	}
	entry := &callEntry{Method: name, This: "pbm", Start: nowMs()}
	cookie := ""
	if m := reCookie.FindSubmatch(body); m != nil {
		cookie = strings.TrimSpace(string(m[1]))
		entry.Session = sessionTag(cookie)
	}
	h.mu.Lock()
	h.calls[name]++
	if len(h.log) < maxLogEntries {
		h.log = append(h.log, entry)
	}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		entry.End = nowMs()
		h.mu.Unlock()
	}()
	r.Header.Del("Cookie")
	if name != "PbmRetrieveServiceContent" && !h.sessionValid(cookie) {
		writeFault(w, "The session is not authenticated.", &types.NotAuthenticated{NoPermission: types.NoPermission{Object: pbm.ServiceInstance, PrivilegeId: "System.View"}})
		return
	}
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: soap.SessionCookieName, Value: cookie})
	}
	r.URL.Path = pbm.Path
	r.Body = ioutil.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	h.sim.ServeHTTP(w, r)
}

func init() {
	simulator.RegisterEndpoint(func(s *simulator.Service, r *simulator.Registry) {
		if !r.IsVPX() {
			return // SPBM is a vCenter service
		}
		reg := simulator.NewRegistry()
		reg.Namespace = pbm.Namespace
		reg.Path = pbm.Path
		reg.Put(&pbmServiceInstance{ManagedObjectReference: pbm.ServiceInstance})
		reg.Put(&pbmProfileManager{ManagedObjectReference: pbmContent.ProfileManager})
		reg.Put(&pbmPlacementSolver{ManagedObjectReference: pbmContent.PlacementSolver})
		reg.Put(&pbmComplianceManager{ManagedObjectReference: pbmContent.ComplianceManager})
		s.RegisterSDK(reg)
	})
}

type pbmServiceInstance struct{ types.ManagedObjectReference }

func (s *pbmServiceInstance) PbmRetrieveServiceContent(_ *pbmtypes.PbmRetrieveServiceContent) soap.HasFault {
	return &pbmmethods.PbmRetrieveServiceContentBody{Res: &pbmtypes.PbmRetrieveServiceContentResponse{Returnval: pbmContent}}
}

type pbmProfileManager struct{ types.ManagedObjectReference }

func (m *pbmProfileManager) PbmQueryProfile(req *pbmtypes.PbmQueryProfile) soap.HasFault {
	body := &pbmmethods.PbmQueryProfileBody{Res: &pbmtypes.PbmQueryProfileResponse{}}
	pbmLab.mu.Lock()
	defer pbmLab.mu.Unlock()
	for _, p := range pbmLab.policies {
		if p.ResourceType != req.ResourceType || (req.ProfileCategory != "" && p.ProfileCategory != req.ProfileCategory) {
			continue
		}
		body.Res.Returnval = append(body.Res.Returnval, p.ProfileId)
	}
	return body
}

func (m *pbmProfileManager) PbmRetrieveContent(req *pbmtypes.PbmRetrieveContent) soap.HasFault {
	body := new(pbmmethods.PbmRetrieveContentBody)
	if len(req.ProfileIds) == 0 {
		body.Fault_ = simulator.Fault("", new(types.InvalidRequest))
		return body
	}
	pbmLab.mu.Lock()
	defer pbmLab.mu.Unlock()
	var out []pbmtypes.BasePbmProfile
	for _, id := range req.ProfileIds {
		p := pbmLab.find(id.UniqueId)
		if p == nil {
			body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "profileId"})
			return body
		}
		out = append(out, p)
	}
	body.Res = &pbmtypes.PbmRetrieveContentResponse{Returnval: out}
	return body
}

func (m *pbmProfileManager) PbmQueryAssociatedProfile(req *pbmtypes.PbmQueryAssociatedProfile) soap.HasFault {
	body := &pbmmethods.PbmQueryAssociatedProfileBody{Res: &pbmtypes.PbmQueryAssociatedProfileResponse{}}
	if req.Entity.ObjectType != string(pbmtypes.PbmObjectTypeVirtualDiskId) {
		return body
	}
	if disk, _ := diskOf(req.Entity.Key); disk != nil {
		if id := pbmLab.profileOfDisk(disk); id != "" {
			body.Res.Returnval = []pbmtypes.PbmProfileId{{UniqueId: id}}
		}
	}
	return body
}

type pbmPlacementSolver struct{ types.ManagedObjectReference }

func (m *pbmPlacementSolver) PbmQueryMatchingHub(req *pbmtypes.PbmQueryMatchingHub) soap.HasFault {
	body := new(pbmmethods.PbmQueryMatchingHubBody)
	pbmLab.mu.Lock()
	p := pbmLab.find(req.Profile.UniqueId)
	pbmLab.mu.Unlock()
	if p == nil {
		body.Fault_ = simulator.Fault("", &types.InvalidArgument{InvalidProperty: "profile"})
		return body
	}
	hubs := req.HubsToSearch
	if len(hubs) == 0 {
		for _, ds := range simulator.Map.All("Datastore") {
			hubs = append(hubs, pbmtypes.PbmPlacementHub{HubType: "Datastore", HubId: ds.Reference().Value})
		}
	}
	body.Res = &pbmtypes.PbmQueryMatchingHubResponse{}
	for _, hub := range hubs {
		ds, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "Datastore", Value: hub.HubId}).(*simulator.Datastore)
		if hub.HubType != "Datastore" || !ok {
			continue
		}
		if matches(p, ds) == "" {
			body.Res.Returnval = append(body.Res.Returnval, hub)
		}
	}
	return body
}

type pbmComplianceManager struct{ types.ManagedObjectReference }

func (m *pbmComplianceManager) PbmCheckCompliance(req *pbmtypes.PbmCheckCompliance) soap.HasFault {
	body := &pbmmethods.PbmCheckComplianceBody{Res: &pbmtypes.PbmCheckComplianceResponse{}}
	for _, e := range req.Entities {
		res := pbmtypes.PbmComplianceResult{CheckTime: time.Now(), Entity: e, ComplianceStatus: string(pbmtypes.PbmComplianceStatusUnknown)}
		disk, ds := diskOf(e.Key)
		if e.ObjectType == string(pbmtypes.PbmObjectTypeVirtualDiskId) && disk != nil {
			id := pbmLab.profileOfDisk(disk)
			pbmLab.mu.Lock()
			p := pbmLab.find(id)
			pbmLab.mu.Unlock()
			switch {
			case p == nil:
				res.ComplianceStatus = string(pbmtypes.PbmComplianceStatusNotApplicable)
			case ds != nil && matches(p, ds) == "":
				res.Profile = &pbmtypes.PbmProfileId{UniqueId: id}
				res.ComplianceStatus = string(pbmtypes.PbmComplianceStatusCompliant)
			default:
				res.Profile = &pbmtypes.PbmProfileId{UniqueId: id}
				res.ComplianceStatus = string(pbmtypes.PbmComplianceStatusNonCompliant)
			}
		}
		body.Res.Returnval = append(body.Res.Returnval, res)
	}
	return body
}
