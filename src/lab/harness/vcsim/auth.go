package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// A restricted vCenter account (tests and `storsweep preflight`'s lab cases): govmomi 0.24's
// AuthorizationManager grants every privilege to everyone (HasPrivilegeOnEntity answers true,
// FetchUserPrivilegeOnEntities the Admin role) and no method checks one. POST
// /_harness/restricted-user {"username","password","privileges":[...],"permissions":[...]} adds a
// second login. Its privileges on an entity are vCenter's (VMware vSphere 8.0 Security, "Permission
// Inheritance" / "Multiple Permission Settings": "A child object inherits the permissions of its
// parent if the parent's propagate property is set to true. A permission that is set directly on a
// child object overrides the permission in the parent object"; an object "can have only one
// permission for each user or group"): the nearest permission for that user on the entity or up its
// inventory tree (ManagedEntity.parent) — one on an ancestor only when it propagates — gives its
// role's privileges; none up to the root folder: "privileges", the role the account holds on the
// root folder. The permissions are the simulator's own (AuthorizationManager.SetEntityPermissions,
// RetrieveEntityPermissions, its roleList): each "permissions" entry {"entity":{"type","name"},
// "privileges":[...],"propagate":bool} is a role added (AddAuthorizationRole) and set on that
// entity for the user, and a permission any SOAP client sets for the user counts the same. Not
// modelled: group principals, and a VM's second parent (its resource pool, whose permissions vSphere
// 6.5 Security says a VM inherits besides its folder's). For its sessions:
//   - HasPrivilegeOnEntity answers from the privileges on that entity ("Check whether a session
//     holds a set of privileges on a managed entity"; a boolean per privId, in order [vSphere Web
//     Services API, AuthorizationManager.HasPrivilegeOnEntity, since 6.5]);
//     FetchUserPrivilegeOnEntities lists them per entity;
//   - a call that needs a privilege the user lacks on the object it acts on fails with
//     NoPermission{object, privilegeId} as a vCenter does ("thrown if the session does not have the
//     privilege", NoPermission: "object: The managed object on which a permission is required",
//     "privilegeId: the privilege that was required") — the privileges per method as the API
//     reference's "Required Privileges" lines give them: CreateVmfsDatastore/CreateNasDatastore/
//     RemoveDatastore Host.Config.Storage on the host; ReconfigVM_Task adding a disk
//     VirtualMachine.Config.AddNewDisk on the VM (and, creating its file, Datastore.AllocateSpace on
//     the datastore it is created on), removing one VirtualMachine.Config.RemoveDisk;
//     CreateVirtualDisk_Task Datastore.AllocateSpace on the datastore; CloneVM_Task (cloneNeeds)
//     VirtualMachine.Provisioning.Clone on the source, VirtualMachine.Inventory.CreateFromExisting on
//     the folder, Resource.AssignVMToPool on the pool, Datastore.AllocateSpace on the datastore.
//     Nothing is forwarded then.

type harnessPermission struct {
	Entity struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"entity"`
	Privileges []string `json:"privileges"`
	Propagate  *bool    `json:"propagate"`
}

type restrictedUser struct {
	Username    string              `json:"username"`
	Password    string              `json:"password"`
	Privileges  []string            `json:"privileges"`
	Permissions []harnessPermission `json:"permissions"`
}

type authState struct {
	mu       sync.Mutex
	user     *restrictedUser
	sessions map[string]bool
	// the one login vcsim accepts (main.go): a restricted login is passed on as it
	adminUser, adminPassword string
}

func (a *authState) restrictedSession(key string) (*restrictedUser, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.user == nil || !a.sessions[key] {
		return nil, false
	}
	return a.user, true
}

func authManager() *simulator.AuthorizationManager {
	content := simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}).(*simulator.ServiceInstance).Content
	return simulator.Map.Get(*content.AuthorizationManager).(*simulator.AuthorizationManager)
}

// samePrincipal: vCenter names a principal DOMAIN\user, a login is user@domain (or either).
func samePrincipal(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(s)
		if i := strings.Index(s, "\\"); i >= 0 {
			return s[i+1:] + "@" + s[:i]
		}
		return s
	}
	return norm(a) == norm(b)
}

// privilegesOn: the user's privileges on entity — from the nearest permission for the user on it or
// up its inventory tree (an ancestor's only when it propagates), else the account's root role.
func privilegesOn(u *restrictedUser, entity types.ManagedObjectReference) map[string]bool {
	am := authManager()
	granted := map[string]bool{}
	found := false
	simulator.Map.WithLock(am, func() {
		for ref, first := &entity, true; ref != nil && !found; first = false {
			// the simulator's RetrieveEntityPermissions takes managed entities only
			e, ok := simulator.Map.Get(*ref).(mo.Entity)
			if !ok {
				break
			}
			body := am.RetrieveEntityPermissions(&types.RetrieveEntityPermissions{Entity: *ref}).(*methods.RetrieveEntityPermissionsBody)
			for _, p := range body.Res.Returnval {
				if p.Group || !samePrincipal(p.Principal, u.Username) || !(first || p.Propagate) {
					continue
				}
				found = true
				for _, role := range am.RoleList {
					if role.RoleId == p.RoleId {
						for _, id := range role.Privilege {
							granted[id] = true
						}
					}
				}
			}
			ref = e.Entity().Parent
		}
	})
	if !found {
		for _, p := range u.Privileges {
			granted[p] = true
		}
	}
	return granted
}

// grant applies the account's "permissions" through the simulator's AuthorizationManager: a role
// per entry (AddAuthorizationRole), set on the entity for the user (SetEntityPermissions, keeping the
// other principals' permissions there: vCenter replaces only this user's).
func grant(u *restrictedUser) error {
	am := authManager()
	for i, hp := range u.Permissions {
		ref, err := entityNamed(hp.Entity.Type, hp.Entity.Name)
		if err != nil {
			return err
		}
		propagate := hp.Propagate == nil || *hp.Propagate
		var fault error
		simulator.Map.WithLock(am, func() {
			name := fmt.Sprintf("harness-%s-%d-%d", u.Username, len(am.RoleList), i)
			if f := am.AddAuthorizationRole(&types.AddAuthorizationRole{Name: name, PrivIds: hp.Privileges}).Fault(); f != nil {
				fault = fmt.Errorf("AddAuthorizationRole %v: %s", hp.Privileges, f.String)
				return
			}
			var roleID int32
			for _, r := range am.RoleList {
				if r.Name == name {
					roleID = r.RoleId
				}
			}
			var keep []types.Permission
			for _, p := range am.RetrieveEntityPermissions(&types.RetrieveEntityPermissions{Entity: ref}).(*methods.RetrieveEntityPermissionsBody).Res.Returnval {
				if p.Group || !samePrincipal(p.Principal, u.Username) {
					keep = append(keep, p)
				}
			}
			keep = append(keep, types.Permission{Entity: &ref, Principal: u.Username, RoleId: roleID, Propagate: propagate})
			am.SetEntityPermissions(&types.SetEntityPermissions{Entity: ref, Permission: keep})
		})
		if fault != nil {
			return fault
		}
	}
	return nil
}

// entityNamed: the managed entity of that type and name (the lab has one datacenter).
func entityNamed(kind, name string) (types.ManagedObjectReference, error) {
	for _, e := range simulator.Map.All(kind) {
		if e.Entity().Name == name {
			return e.Reference(), nil
		}
	}
	return types.ManagedObjectReference{}, fmt.Errorf("no %s named %q", kind, name)
}

// loginAs rewrites a restricted account's Login to the simulator's own account and says so.
func (a *authState) loginAs(req *types.Login) ([]byte, bool) {
	a.mu.Lock()
	u := a.user
	a.mu.Unlock()
	if u == nil || req.UserName != u.Username || req.Password != u.Password {
		return nil, false
	}
	r := *req
	r.UserName, r.Password = a.adminUser, a.adminPassword
	var out bytes.Buffer
	out.WriteString(xml.Header)
	// encoded by hand: the simulator decodes the body by its element name
	fmt.Fprintf(&out, `<soapenv:Envelope xmlns:soapenv="%s" xmlns:xsd="%s" xmlns:xsi="%s"><soapenv:Body><Login xmlns="urn:vim25"><_this type="SessionManager">%s</_this><userName>%s</userName><password>%s</password></Login></soapenv:Body></soapenv:Envelope>`,
		nsEnv, nsXSD, nsXSI, xmlText(req.This.Value), xmlText(r.UserName), xmlText(r.Password))
	return out.Bytes(), true
}

func xmlText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (a *authState) remember(rec *recorder) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range (&http.Response{Header: rec.header}).Cookies() {
		if c.Name == soap.SessionCookieName && c.Value != "" {
			a.sessions[c.Value] = true
		}
	}
}

// ownUserName: the Login answer names the restricted account (UserSession.userName), not the
// simulator's account it was passed on as — as vCenter names the user who logged in.
func (a *authState) ownUserName(rec *recorder, method *simulator.Method) {
	req, ok := method.Body.(*types.Login)
	if !ok {
		return
	}
	b := rec.body.Bytes()
	from := []byte("<userName>" + xmlText(a.adminUser) + "</userName>")
	if bytes.Contains(b, from) {
		out := bytes.Replace(b, from, []byte("<userName>"+xmlText(req.UserName)+"</userName>"), 1)
		rec.body.Reset()
		rec.body.Write(out)
		rec.header.Del("Content-Length")
	}
}

type need struct {
	priv string
	on   types.ManagedObjectReference
}

// hostOfDatastoreSystem: the host whose HostDatastoreSystem this is (the privilege is checked on the host).
func hostOfDatastoreSystem(dss types.ManagedObjectReference) types.ManagedObjectReference {
	for _, e := range simulator.Map.All("HostSystem") {
		if h, ok := e.(*simulator.HostSystem); ok && h.ConfigManager.DatastoreSystem != nil && *h.ConfigManager.DatastoreSystem == dss {
			return h.Reference()
		}
	}
	return dss
}

// datastoreOf: the datastore a disk file is created on (its backing's datastore, else "[name] …").
func datastoreOf(ref *types.ManagedObjectReference, fileName string, fallback types.ManagedObjectReference) types.ManagedObjectReference {
	if ref != nil {
		return *ref
	}
	if strings.HasPrefix(fileName, "[") {
		if i := strings.Index(fileName, "]"); i > 0 {
			if ds, err := entityNamed("Datastore", fileName[1:i]); err == nil {
				return ds
			}
		}
	}
	return fallback
}

// requiredPrivileges of a call, with the object each is checked on.
func requiredPrivileges(method *simulator.Method) []need {
	switch req := method.Body.(type) {
	case *types.CreateVmfsDatastore, *types.CreateNasDatastore, *types.RemoveDatastore:
		return []need{{"Host.Config.Storage", hostOfDatastoreSystem(method.This)}}
	case *types.CreateVirtualDisk_Task:
		return []need{{"Datastore.AllocateSpace", datastoreOf(nil, req.Name, method.This)}}
	case *types.CloneVM_Task:
		return cloneNeeds(method.This, req)
	case *types.ReconfigVM_Task:
		var out []need
		for _, ch := range req.Spec.DeviceChange {
			spec := ch.GetVirtualDeviceConfigSpec()
			disk, ok := spec.Device.(*types.VirtualDisk)
			if !ok {
				continue
			}
			switch spec.Operation {
			case types.VirtualDeviceConfigSpecOperationAdd:
				out = append(out, need{"VirtualMachine.Config.AddNewDisk", method.This})
				if spec.FileOperation == types.VirtualDeviceConfigSpecFileOperationCreate {
					var ds *types.ManagedObjectReference
					name := ""
					if b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
						ds, name = b.GetVirtualDeviceFileBackingInfo().Datastore, b.GetVirtualDeviceFileBackingInfo().FileName
					}
					out = append(out, need{"Datastore.AllocateSpace", datastoreOf(ds, name, method.This)})
				}
			case types.VirtualDeviceConfigSpecOperationRemove:
				out = append(out, need{"VirtualMachine.Config.RemoveDisk", method.This})
			}
		}
		return out
	}
	return nil
}

// cloneNeeds: CloneVM_Task's privileges (vSphere Automation API, POST /api/vcenter/vm?action=clone:
// "The resource VirtualMachine referenced by … source requires VirtualMachine.Provisioning.Clone",
// the folder "requires VirtualMachine.Inventory.CreateFromExisting", the resource pool "requires
// Resource.AssignVMToPool", the datastore "requires Datastore.AllocateSpace"). Without a pool or a
// datastore in the spec, the source's are the clone's (vim.vm.RelocateSpec: "If not specified, the
// current datastore is used").
func cloneNeeds(source types.ManagedObjectReference, req *types.CloneVM_Task) []need {
	out := []need{{"VirtualMachine.Provisioning.Clone", source}, {"VirtualMachine.Inventory.CreateFromExisting", req.Folder}}
	vm, _ := simulator.Map.Get(source).(*simulator.VirtualMachine)
	pool, ds := req.Spec.Location.Pool, req.Spec.Location.Datastore
	if pool == nil && vm != nil {
		pool = vm.ResourcePool
	}
	if ds == nil && vm != nil && len(vm.Datastore) > 0 {
		ds = &vm.Datastore[0]
	}
	if pool != nil {
		out = append(out, need{"Resource.AssignVMToPool", *pool})
	}
	if ds != nil {
		out = append(out, need{"Datastore.AllocateSpace", *ds})
	}
	return out
}

// authorize answers a restricted session's privilege questions and refuses what its role does not
// allow; it reports whether it wrote the answer.
func (h *harness) authorize(w http.ResponseWriter, method *simulator.Method, key string) bool {
	u, ok := h.auth.restrictedSession(key)
	if !ok {
		return false
	}
	switch req := method.Body.(type) {
	case *types.HasPrivilegeOnEntity:
		granted := privilegesOn(u, req.Entity)
		var body strings.Builder
		for _, p := range req.PrivId {
			fmt.Fprintf(&body, `<returnval>%t</returnval>`, granted[p])
		}
		writeResponse(w, "HasPrivilegeOnEntity", body.String())
		return true
	case *types.FetchUserPrivilegeOnEntities:
		var body strings.Builder
		for _, e := range req.Entities {
			var privs []string
			for p := range privilegesOn(u, e) {
				privs = append(privs, p)
			}
			sort.Strings(privs)
			fmt.Fprintf(&body, `<returnval><entity type="%s">%s</entity>`, xmlText(e.Type), xmlText(e.Value))
			for _, p := range privs {
				fmt.Fprintf(&body, `<privileges>%s</privileges>`, xmlText(p))
			}
			body.WriteString(`</returnval>`)
		}
		writeResponse(w, "FetchUserPrivilegeOnEntities", body.String())
		return true
	}
	for _, n := range requiredPrivileges(method) {
		if !privilegesOn(u, n.on)[n.priv] {
			writeFault(w, fmt.Sprintf("Permission to perform this operation was denied. (%s on %s %s)", n.priv, n.on.Type, n.on.Value), &types.NoPermission{Object: n.on, PrivilegeId: n.priv})
			return true
		}
	}
	return false
}

func writeResponse(w http.ResponseWriter, method, inner string) {
	var out bytes.Buffer
	out.WriteString(xml.Header)
	fmt.Fprintf(&out, `<soapenv:Envelope xmlns:soapenv="%s" xmlns:xsd="%s" xmlns:xsi="%s"><soapenv:Body><%sResponse xmlns="urn:vim25">%s</%sResponse></soapenv:Body></soapenv:Envelope>`, nsEnv, nsXSD, nsXSI, method, inner, method)
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Bytes())
}
