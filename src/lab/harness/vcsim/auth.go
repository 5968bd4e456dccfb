package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// A restricted vCenter account (tests and `storsweep preflight`'s lab cases): govmomi 0.24's
// AuthorizationManager grants every privilege to everyone (HasPrivilegeOnEntity answers true,
// FetchUserPrivilegeOnEntities the Admin role) and no method checks one. POST
// /_harness/restricted-user {"username","password","privileges":[...]} adds a second login whose
// role holds only the privileges listed (on every entity: the harness keeps no per-object
// permissions). For its sessions:
//   - HasPrivilegeOnEntity answers from that role ("Check whether a session holds a set of
//     privileges on a managed entity"; a boolean per privId, in order [vSphere Web Services API,
//     AuthorizationManager.HasPrivilegeOnEntity, since 6.5]); FetchUserPrivilegeOnEntities lists it;
//   - a call that needs a privilege the role lacks fails with NoPermission{object, privilegeId} as
//     a vCenter does ("thrown if the session does not have the privilege", NoPermission: "the
//     privilege that was required") — the privileges per method as the API reference's "Required
//     Privileges" lines give them: CreateVmfsDatastore/CreateNasDatastore/RemoveDatastore
//     Host.Config.Storage; ReconfigVM_Task adding a disk VirtualMachine.Config.AddNewDisk (and, creating
//     its file, Datastore.AllocateSpace), removing one VirtualMachine.Config.RemoveDisk;
//     CreateVirtualDisk_Task Datastore.AllocateSpace. Nothing is forwarded to the simulator then.

type restrictedUser struct {
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	Privileges []string `json:"privileges"`
}

type authState struct {
	mu       sync.Mutex
	user     *restrictedUser
	sessions map[string]bool
	// the one login vcsim accepts (main.go): a restricted login is passed on as it
	adminUser, adminPassword string
}

func (a *authState) restrictedSession(key string) (map[string]bool, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.user == nil || !a.sessions[key] {
		return nil, false
	}
	granted := map[string]bool{}
	for _, p := range a.user.Privileges {
		granted[p] = true
	}
	return granted, true
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

// requiredPrivileges of a call, with the object each is checked on.
func requiredPrivileges(method *simulator.Method) []string {
	switch req := method.Body.(type) {
	case *types.CreateVmfsDatastore, *types.CreateNasDatastore, *types.RemoveDatastore:
		return []string{"Host.Config.Storage"}
	case *types.CreateVirtualDisk_Task:
		return []string{"Datastore.AllocateSpace"}
	case *types.ReconfigVM_Task:
		var out []string
		for _, ch := range req.Spec.DeviceChange {
			spec := ch.GetVirtualDeviceConfigSpec()
			if _, disk := spec.Device.(*types.VirtualDisk); !disk {
				continue
			}
			switch spec.Operation {
			case types.VirtualDeviceConfigSpecOperationAdd:
				out = append(out, "VirtualMachine.Config.AddNewDisk")
				if spec.FileOperation == types.VirtualDeviceConfigSpecFileOperationCreate {
					out = append(out, "Datastore.AllocateSpace")
				}
			case types.VirtualDeviceConfigSpecOperationRemove:
				out = append(out, "VirtualMachine.Config.RemoveDisk")
			}
		}
		return out
	}
	return nil
}

// authorize answers a restricted session's privilege questions and refuses what its role does not
// allow; it reports whether it wrote the answer.
func (h *harness) authorize(w http.ResponseWriter, method *simulator.Method, key string) bool {
	granted, ok := h.auth.restrictedSession(key)
	if !ok {
		return false
	}
	switch req := method.Body.(type) {
	case *types.HasPrivilegeOnEntity:
		var body strings.Builder
		for _, p := range req.PrivId {
			fmt.Fprintf(&body, `<returnval>%t</returnval>`, granted[p])
		}
		writeResponse(w, "HasPrivilegeOnEntity", body.String())
		return true
	case *types.FetchUserPrivilegeOnEntities:
		var privs []string
		for p := range granted {
			privs = append(privs, p)
		}
		sort.Strings(privs)
		var body strings.Builder
		for _, e := range req.Entities {
			fmt.Fprintf(&body, `<returnval><entity type="%s">%s</entity>`, xmlText(e.Type), xmlText(e.Value))
			for _, p := range privs {
				fmt.Fprintf(&body, `<privileges>%s</privileges>`, xmlText(p))
			}
			body.WriteString(`</returnval>`)
		}
		writeResponse(w, "FetchUserPrivilegeOnEntities", body.String())
		return true
	}
	for _, p := range requiredPrivileges(method) {
		if !granted[p] {
			writeFault(w, fmt.Sprintf("Permission to perform this operation was denied. (%s on %s)", p, method.This.Value), &types.NoPermission{Object: method.This, PrivilegeId: p})
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
