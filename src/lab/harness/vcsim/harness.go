package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/ioutil"
	"log"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// Methods a real vSphere endpoint answers without a session.
var noSessionMethods = map[string]bool{
	"RetrieveServiceContent": true, "Login": true, "LoginByToken": true,
	"LoginExtensionByCertificate": true, "LoginExtensionBySubjectName": true, "CloneSession": true,
}

type faultRule struct {
	Method  string          `json:"method"`
	Count   int             `json:"count"`
	Fault   string          `json:"fault"`
	Message string          `json:"message"`
	AsTask  bool            `json:"asTask"`
	Fields  json.RawMessage `json:"fields"`
}

type dropRule struct {
	Method string `json:"method"`
	Count  int    `json:"count"`
	When   string `json:"when"`
}

type harness struct {
	sim     http.Handler
	esx     bool
	storage *storageState
	idle    time.Duration

	mu       sync.Mutex
	calls    map[string]int
	// every SOAP call since start or reset, in arrival order (GET /_harness/log)
	log      []*callEntry
	faults   map[string][]*faultRule
	drops    map[string][]*dropRule
	delays   map[string]int
	slow     map[string]int
	// calls and tasks held until the test releases them (hold.go)
	holds    holdState
	sessions map[string]time.Time
	// vmLocks serialises our RDM rewrite around each VM's reconfiguration.
	vmLocks map[string]*sync.Mutex
	disks   *diskRegistry
	// the lab guest's block devices (guestdisks.go); nil without -guest-disks
	guest *guestDisks
	// guest operations (guestops.go); nil without -guest-ops
	guestOps *guestOps
	// a restricted second login (auth.go)
	auth *authState
}

func newHarness(dataDir string, idle time.Duration) *harness {
	h := &harness{
		auth: &authState{sessions: map[string]bool{}},
		storage: &storageState{
			dataDir: dataDir,
			usedBy:  map[string]types.ManagedObjectReference{},
			vmfs:    map[string]*vmfsVolume{},
		},
		idle:     idle,
		sessions: map[string]time.Time{},
		vmLocks:  map[string]*sync.Mutex{},
		disks:    newDiskRegistry(),
		holds:    newHoldState(),
	}
	h.resetRules()
	return h
}

func (h *harness) resetRules() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = map[string]int{}
	h.log = nil
	h.faults = map[string][]*faultRule{}
	h.drops = map[string][]*dropRule{}
	h.delays = map[string]int{}
	h.slow = map[string]int{}
}

func (h *harness) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_harness/") {
		h.control(w, r)
		return
	}
	if h.guestOps != nil && (r.URL.Path == "/guestFile" || strings.HasPrefix(r.URL.Path, "/guestFile/")) {
		h.guestOps.serveFile(w, r)
		return
	}
	if r.Method == http.MethodPost && (r.URL.Path == "/pbm" || r.URL.Path == "/pbm/sdk") {
		h.servePbm(w, r) // SPBM (pbm.go)
		return
	}
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/sdk") || strings.HasSuffix(r.URL.Path, ".xml") {
		h.sim.ServeHTTP(w, r)
		return
	}
	body, err := ioutil.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	method, err := simulator.UnmarshalBody(typeFunc, body)
	if err != nil {
		// Let the simulator produce its own InvalidRequest fault for malformed envelopes.
		h.forward(w, r, body)
		return
	}
	name := method.Name

	entry := &callEntry{Method: name, This: method.This.Type + ":" + method.This.Value, Start: nowMs(), Devices: deviceChanges(method), Datastore: datastoreName(method), VM: vmName(method), Snapshot: snapshotCalled(method)}
	if c, err := r.Cookie(soap.SessionCookieName); err == nil {
		entry.Session = sessionTag(c.Value)
	}
	h.mu.Lock()
	h.calls[name]++
	if len(h.log) < maxLogEntries {
		h.log = append(h.log, entry)
	}
	delay := h.delays[name]
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		entry.End = nowMs()
		h.mu.Unlock()
	}()

	key := ""
	if c, err := r.Cookie(soap.SessionCookieName); err == nil {
		key = c.Value
	}
	if !h.sessionValid(key) {
		// The simulator still knows revoked sessions; hide the cookie so it sees none.
		r.Header.Del("Cookie")
		if !noSessionMethods[name] {
			writeFault(w, "The session is not authenticated.", &types.NotAuthenticated{
				NoPermission: types.NoPermission{Object: method.This, PrivilegeId: "System.View"},
			})
			return
		}
	}

	restrictedLogin := false
	if req, ok := method.Body.(*types.Login); ok && name == "Login" {
		if b, ok := h.auth.loginAs(req); ok {
			body, restrictedLogin = b, true
		}
	}
	if h.authorize(w, method, key) {
		return
	}

	h.waitAtGate(name, entry)
	if delay > 0 {
		time.Sleep(time.Duration(delay) * time.Millisecond)
	}
	if h.takeDrop(name, "before") {
		dropConnection(w)
		return
	}
	if rule := h.takeFault(name); rule != nil {
		h.injectFault(w, method, rule)
		return
	}

	// linked clones and the snapshots they hang on (linked_clones.go)
	if f, msg := linkedCloneRule(method); f != nil {
		if ref, ok := failTask(method, f, msg); ok {
			writeTaskResponse(w, name, ref)
			return
		}
	}
	var after func(ok bool)
	switch name {
	case "CreateSnapshot_Task":
		after = h.snapshotHook(method) // linked_clones.go
	case "ReconfigVM_Task":
		if req, ok := method.Body.(*types.ReconfigVM_Task); ok {
			var reject types.BaseMethodFault
			// what a real host refuses or changes (reconfig_rules.go) comes first
			if body, reject = reconfigRules(req, body); reject != nil {
				if ref, ok := failTask(method, reject, ""); ok {
					writeTaskResponse(w, name, ref)
					return
				}
			}
			if reject = pbmLab.recordProfiles(req); reject != nil { // disk policies (pbm.go)
				if ref, ok := failTask(method, reject, ""); ok {
					writeTaskResponse(w, name, ref)
					return
				}
			}
			body, after, reject = h.prepareReconfig(req, body)
			if reject != nil {
				if ref, ok := failTask(method, reject, ""); ok {
					writeTaskResponse(w, name, ref)
					return
				}
			}
		}
	case "CreateVirtualDisk_Task", "DeleteVirtualDisk_Task":
		if req, ok := method.Body.(*types.CreateVirtualDisk_Task); ok {
			if f, msg := createDiskCapacity(req); f != nil {
				if ref, ok := failTask(method, f, msg); ok {
					writeTaskResponse(w, name, ref)
					return
				}
			}
		}
		after = h.diskManagerHook(method)
	case "CloneVM_Task":
		after = h.cloneHook(method) // clones.go
	case "Destroy_Task":
		after = h.destroyHook(method)
	}

	rec := newRecorder()
	func() {
		// A simulator panic must not leave the VM's RDM backings rewritten or its lock held.
		defer func() {
			if p := recover(); p != nil {
				if after != nil {
					after(false)
				}
				panic(p)
			}
		}()
		h.forward(rec, r, body)
	}()
	ok := rec.status == http.StatusOK && (!strings.HasSuffix(name, "_Task") || taskSucceeded(rec.body.Bytes()))
	if after != nil {
		after(ok)
	}
	if h.guestOps != nil && ok && powerMethods[name] {
		h.guestOps.powerChanged(method.This)
	}
	if rec.status == http.StatusOK {
		if strings.HasSuffix(name, "_Task") {
			fixTaskEntity(rec.body.Bytes())
		}
		h.trackSession(name, rec)
		if restrictedLogin {
			h.auth.remember(rec)
			h.auth.ownUserName(rec, method)
		}
		if name == "Logout" {
			h.forgetSession(key)
		}
		h.maybeSlowTask(name, rec.body.Bytes(), entry)
	}
	if h.takeDrop(name, "after") {
		dropConnection(w)
		return
	}
	rec.copyTo(w)
}

// the VM methods that change its power state (the guest's Tools run only while it is on)
var powerMethods = map[string]bool{"PowerOnVM_Task": true, "PowerOffVM_Task": true, "SuspendVM_Task": true,
	"ResetVM_Task": true, "ShutdownGuest": true, "StandbyGuest": true}

func typeFunc(name string) (reflect.Type, bool) {
	t, ok := types.TypeFunc()(name)
	if !ok {
		if i := strings.IndexByte(name, ':'); i >= 0 {
			return types.TypeFunc()(name[i+1:])
		}
	}
	return t, ok
}

func (h *harness) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	r2 := r.Clone(r.Context())
	r2.Body = ioutil.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	h.sim.ServeHTTP(w, r2)
}

// --- sessions -------------------------------------------------------------------------------

func (h *harness) sessionValid(key string) bool {
	if key == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	last, ok := h.sessions[key]
	if !ok {
		return false
	}
	if h.idle > 0 && time.Since(last) > h.idle {
		delete(h.sessions, key)
		return false
	}
	h.sessions[key] = time.Now()
	return true
}

func (h *harness) trackSession(method string, rec *recorder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range (&http.Response{Header: rec.header}).Cookies() {
		if c.Name == soap.SessionCookieName && c.Value != "" {
			h.sessions[c.Value] = time.Now()
		}
	}
}

func (h *harness) forgetSession(key string) {
	h.mu.Lock()
	delete(h.sessions, key)
	h.mu.Unlock()
}

// --- injected failures ----------------------------------------------------------------------

func (h *harness) takeDrop(method, when string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.drops[method] {
		if d.Count > 0 && d.When == when {
			d.Count--
			return true
		}
	}
	return false
}

func (h *harness) takeFault(method string) *faultRule {
	h.mu.Lock()
	defer h.mu.Unlock()
	rules := h.faults[method]
	for len(rules) > 0 && rules[0].Count <= 0 {
		rules = rules[1:]
	}
	h.faults[method] = rules
	if len(rules) == 0 {
		return nil
	}
	rules[0].Count--
	cp := *rules[0]
	return &cp
}

func newFault(name string, fields json.RawMessage) (types.BaseMethodFault, error) {
	t, ok := types.TypeFunc()(name)
	if !ok {
		return nil, fmt.Errorf("unknown vim25 type %q", name)
	}
	v := reflect.New(t).Interface()
	f, ok := v.(types.BaseMethodFault)
	if !ok {
		return nil, fmt.Errorf("%q is not a MethodFault type", name)
	}
	if len(fields) > 0 {
		if err := json.Unmarshal(fields, v); err != nil {
			return nil, fmt.Errorf("fields for %s: %v", name, err)
		}
	}
	return f, nil
}

func (h *harness) injectFault(w http.ResponseWriter, method *simulator.Method, rule *faultRule) {
	f, err := newFault(rule.Fault, rule.Fields)
	if err != nil {
		// Validated when the rule was posted; fall back to a generic fault just in case.
		f = &types.SystemError{Reason: err.Error()}
	}
	if na, ok := f.(*types.NotAuthenticated); ok && na.Object.Value == "" {
		na.Object = method.This
		na.PrivilegeId = "System.View"
	}
	if rule.AsTask && strings.HasSuffix(method.Name, "_Task") {
		if ref, ok := failTask(method, f, rule.Message); ok {
			writeTaskResponse(w, method.Name, ref)
			return
		}
		writeFault(w, "managed object not found", &types.ManagedObjectNotFound{Obj: method.This})
		return
	}
	writeFault(w, rule.Message, f)
}

func lcFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		// HTTP/2 cannot be hijacked; panic(http.ErrAbortHandler) aborts the stream instead.
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

var taskRefRE = regexp.MustCompile(`<returnval type="Task">([^<]+)</returnval>`)

// fixTaskEntity clears TaskInfo.entity when vcsim set it to a non-ManagedEntity (e.g.
// VirtualDiskManager): the WSDL types entity as ManagedEntity, and strict clients such as
// pyVmomi reject the whole update otherwise.
func fixTaskEntity(resp []byte) {
	m := taskRefRE.FindSubmatch(resp)
	if m == nil {
		return
	}
	task, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "Task", Value: string(m[1])}).(*simulator.Task)
	if !ok {
		return
	}
	simulator.Map.WithLock(task, func() {
		if task.Info.Entity == nil {
			return
		}
		if _, isEntity := simulator.Map.Get(*task.Info.Entity).(mo.Entity); !isEntity {
			task.Info.Entity = nil
			task.Info.EntityName = ""
		}
	})
}

// taskSucceeded reports whether the task named in a *_Task response ended in success (vcsim
// runs tasks inside the call, so the outcome is known before the response is sent).
func taskSucceeded(resp []byte) bool {
	m := taskRefRE.FindSubmatch(resp)
	if m == nil {
		return false
	}
	task, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "Task", Value: string(m[1])}).(*simulator.Task)
	if !ok {
		return false
	}
	var state types.TaskInfoState
	simulator.Map.WithLock(task, func() { state = task.Info.State })
	return state == types.TaskInfoStateSuccess
}

// maybeSlowTask keeps a finished task "running" for the configured time. The simulator runs
// tasks inside the call; the client has not seen the task yet, so rewinding its state before
// the response is sent and restoring it later is indistinguishable from a slow host.
func (h *harness) maybeSlowTask(method string, resp []byte, entry *callEntry) {
	h.mu.Lock()
	ms := h.slow[method]
	h.mu.Unlock()
	if ms <= 0 && !h.tasksHeld(method) {
		return
	}
	m := taskRefRE.FindSubmatch(resp)
	if m == nil {
		return
	}
	task, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "Task", Value: string(m[1])}).(*simulator.Task)
	if !ok {
		return
	}
	var final types.TaskInfo
	simulator.Map.WithLock(task, func() {
		final = task.Info
		simulator.Map.Update(task, []types.PropertyChange{
			{Name: "info.state", Val: types.TaskInfoStateRunning},
			{Name: "info.progress", Val: int32(0)},
			{Name: "info.result", Val: nil},
			{Name: "info.error", Val: nil},
			{Name: "info.completeTime", Val: nil},
		})
	})
	finish := func() {
		changes := []types.PropertyChange{
			{Name: "info.progress", Val: int32(100)},
			{Name: "info.completeTime", Val: time.Now()},
			{Name: "info.result", Val: final.Result},
		}
		if final.Error != nil {
			changes = append(changes, types.PropertyChange{Name: "info.error", Val: *final.Error})
		}
		changes = append(changes, types.PropertyChange{Name: "info.state", Val: final.State})
		simulator.Map.WithLock(task, func() { simulator.Map.Update(task, changes) })
		h.mu.Lock()
		entry.TaskEnd = nowMs()
		h.mu.Unlock()
	}
	// held (hold.go): finished when the test releases it
	if h.holdTask(method, entry, finish) {
		return
	}
	if ms <= 0 {
		// the hold ended between the check above and now: the task ends at once
		finish()
		return
	}
	go func() {
		time.Sleep(time.Duration(ms/2) * time.Millisecond)
		simulator.Map.WithLock(task, func() {
			simulator.Map.Update(task, []types.PropertyChange{{Name: "info.progress", Val: int32(50)}})
		})
		time.Sleep(time.Duration(ms-ms/2) * time.Millisecond)
		finish()
	}()
}

// callEntry is one SOAP call: its method, `_this` (type:value), when it arrived and when its
// answer was written (epoch milliseconds, fractional), and for a task slowed by slow-task, when
// the task finished (0 otherwise: the simulator's tasks finish before the answer).
type callEntry struct {
	Method  string  `json:"method"`
	This    string  `json:"this"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	TaskEnd float64 `json:"taskEnd,omitempty"`
	// a short hash of the session cookie (never the cookie): which client session made the call
	Session string `json:"session,omitempty"`
	// ReconfigVM_Task: each disk change as "add|remove|edit <file>" (calllog.go)
	Devices []string `json:"devices,omitempty"`
	// the call (or its task) was held by /_harness/hold (hold.go)
	Held bool `json:"held,omitempty"`
	// Create{Vmfs,Nas}Datastore, RemoveDatastore: the datastore's name (calllog.go)
	Datastore string `json:"datastore,omitempty"`
	// CloneVM_Task: the clone's name; Destroy_Task of a VM: its name; {Create,Remove}Snapshot_Task: the VM's (calllog.go)
	VM string `json:"vm,omitempty"`
	// CreateSnapshot_Task, RemoveSnapshot_Task: the snapshot's name (calllog.go)
	Snapshot string `json:"snapshot,omitempty"`
}

const maxLogEntries = 200000

func nowMs() float64 { return float64(time.Now().UnixNano()) / 1e6 }

// --- SOAP writers ---------------------------------------------------------------------------

type faultDetail struct{ fault types.BaseMethodFault }

func (d faultDetail) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	kind := reflect.TypeOf(d.fault).Elem().Name()
	start := xml.StartElement{
		Name: xml.Name{Local: kind + "Fault"},
		Attr: []xml.Attr{
			{Name: xml.Name{Local: "xmlns"}, Value: "urn:vim25"},
			{Name: xml.Name{Local: "xsi:type"}, Value: kind},
		},
	}
	return e.EncodeElement(d.fault, start)
}

type faultEnvelope struct {
	XMLName xml.Name `xml:"soapenv:Envelope"`
	Env     string   `xml:"xmlns:soapenv,attr"`
	XSD     string   `xml:"xmlns:xsd,attr"`
	XSI     string   `xml:"xmlns:xsi,attr"`
	Body    struct {
		Fault struct {
			Code   string `xml:"faultcode"`
			String string `xml:"faultstring"`
			Detail struct {
				Inner faultDetail
			} `xml:"detail"`
		} `xml:"soapenv:Fault"`
	} `xml:"soapenv:Body"`
}

const (
	nsEnv = "http://schemas.xmlsoap.org/soap/envelope/"
	nsXSD = "http://www.w3.org/2001/XMLSchema"
	nsXSI = "http://www.w3.org/2001/XMLSchema-instance"
)

func writeFault(w http.ResponseWriter, msg string, f types.BaseMethodFault) {
	env := faultEnvelope{Env: nsEnv, XSD: nsXSD, XSI: nsXSI}
	env.Body.Fault.Code = "ServerFaultCode"
	env.Body.Fault.String = msg
	env.Body.Fault.Detail.Inner = faultDetail{f}
	var out bytes.Buffer
	out.WriteString(xml.Header)
	if err := xml.NewEncoder(&out).Encode(&env); err != nil {
		log.Printf("encoding fault %T: %v", f, err)
		http.Error(w, "fault encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(out.Bytes())
}

func writeTaskResponse(w http.ResponseWriter, method string, ref types.ManagedObjectReference) {
	var out bytes.Buffer
	out.WriteString(xml.Header)
	fmt.Fprintf(&out, `<soapenv:Envelope xmlns:soapenv="%s" xmlns:xsd="%s" xmlns:xsi="%s"><soapenv:Body>`, nsEnv, nsXSD, nsXSI)
	fmt.Fprintf(&out, `<%sResponse xmlns="urn:vim25"><returnval type="Task">%s</returnval></%sResponse>`, method, ref.Value, method)
	out.WriteString(`</soapenv:Body></soapenv:Envelope>`)
	w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Bytes())
}

// --- response recorder ----------------------------------------------------------------------

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, status: http.StatusOK} }

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.status = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }

func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", `text/xml; charset="utf-8"`)
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}

// --- control API ----------------------------------------------------------------------------

func (h *harness) control(w http.ResponseWriter, r *http.Request) {
	reply := func(code int, v interface{}) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	bad := func(format string, a ...interface{}) {
		reply(http.StatusBadRequest, map[string]string{"error": fmt.Sprintf(format, a...)})
	}
	op := strings.TrimPrefix(r.URL.Path, "/_harness/")
	if op == "log" {
		if r.Method != http.MethodGet {
			bad("use GET for /_harness/log")
			return
		}
		h.mu.Lock()
		out := make([]callEntry, len(h.log))
		for i, e := range h.log {
			out[i] = *e
		}
		h.mu.Unlock()
		reply(http.StatusOK, out)
		return
	}
	if op == "calls" {
		if r.Method != http.MethodGet {
			bad("use GET for /_harness/calls")
			return
		}
		h.mu.Lock()
		out := map[string]int{}
		for k, v := range h.calls {
			out[k] = v
		}
		h.mu.Unlock()
		reply(http.StatusOK, out)
		return
	}
	if op == "guest-ops" || op == "guest-processes" || op == "guest-tools" {
		if h.guestOps == nil {
			reply(http.StatusNotFound, map[string]string{"error": "/_harness/" + op + ": the harness runs without -guest-ops"})
			return
		}
		if (op == "guest-tools") != (r.Method == http.MethodPost) || (op != "guest-tools" && r.Method != http.MethodGet) {
			bad("use %s for /_harness/%s", map[bool]string{true: "POST", false: "GET"}[op == "guest-tools"], op)
			return
		}
		raw, _ := ioutil.ReadAll(r.Body)
		code, v := h.guestOps.control(op, r, raw)
		reply(code, v)
		return
	}
	if r.Method != http.MethodPost {
		bad("use POST for /_harness/%s", op)
		return
	}
	raw, _ := ioutil.ReadAll(r.Body)
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := func(v interface{}) bool {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			bad("/_harness/%s: invalid JSON body: %v", op, err)
			return false
		}
		return true
	}
	switch op {
	case "restricted-user":
		var u restrictedUser
		if !dec(&u) {
			return
		}
		if u.Username == "" || u.Password == "" {
			bad("/_harness/restricted-user needs \"username\" and \"password\"")
			return
		}
		if err := grant(&u); err != nil {
			bad("/_harness/restricted-user: %v", err)
			return
		}
		h.auth.mu.Lock()
		h.auth.user = &u
		h.auth.mu.Unlock()
	case "fault":
		var rule faultRule
		if !dec(&rule) {
			return
		}
		if rule.Method == "" || rule.Fault == "" {
			bad("/_harness/fault needs \"method\" and \"fault\" (a vim25 fault type name such as HostConfigFault)")
			return
		}
		if _, err := newFault(rule.Fault, rule.Fields); err != nil {
			bad("/_harness/fault: %v", err)
			return
		}
		if rule.Count == 0 {
			rule.Count = 1
		}
		h.mu.Lock()
		h.faults[rule.Method] = append(h.faults[rule.Method], &rule)
		h.mu.Unlock()
	case "drop":
		var rule dropRule
		if !dec(&rule) {
			return
		}
		if rule.Method == "" {
			bad("/_harness/drop needs \"method\"")
			return
		}
		if rule.When == "" {
			rule.When = "before"
		}
		if rule.When != "before" && rule.When != "after" {
			bad("/_harness/drop: \"when\" must be \"before\" or \"after\", got %q", rule.When)
			return
		}
		if rule.Count == 0 {
			rule.Count = 1
		}
		h.mu.Lock()
		h.drops[rule.Method] = append(h.drops[rule.Method], &rule)
		h.mu.Unlock()
	case "delay", "slow-task":
		var rule struct {
			Method string `json:"method"`
			Ms     int    `json:"ms"`
		}
		if !dec(&rule) {
			return
		}
		if rule.Method == "" || rule.Ms < 0 {
			bad("/_harness/%s needs \"method\" and \"ms\" >= 0", op)
			return
		}
		if op == "slow-task" && !strings.HasSuffix(rule.Method, "_Task") {
			bad("/_harness/slow-task: %q is not a *_Task method", rule.Method)
			return
		}
		h.mu.Lock()
		if op == "delay" {
			h.delays[rule.Method] = rule.Ms
		} else {
			h.slow[rule.Method] = rule.Ms
		}
		h.mu.Unlock()
	case "hold":
		var rule struct {
			Method string `json:"method"`
			Task   bool   `json:"task"`
		}
		if !dec(&rule) {
			return
		}
		if err := h.hold(rule.Method, rule.Task); err != nil {
			bad("%v", err)
			return
		}
	case "release":
		var rule struct {
			Method string `json:"method"`
		}
		if !dec(&rule) {
			return
		}
		calls, tasks := h.release(rule.Method)
		reply(http.StatusOK, map[string]int{"calls": calls, "tasks": tasks})
		return
	case "version":
		// test control: simulate another release from now on (version.go)
		var v struct {
			Version string `json:"version"`
		}
		if !dec(&v) {
			return
		}
		if err := setVersionProfile(v.Version, h.esx); err != nil {
			bad("/_harness/version: %v", err)
			return
		}
		reply(http.StatusOK, map[string]string{"version": labProfile.Version})
		return
	case "guest-identity":
		// test control: the guest names disks attached from now on under another identity (guestdisks.go)
		var v struct {
			Mode string `json:"mode"`
		}
		if !dec(&v) {
			return
		}
		if err := setGuestIdentity(v.Mode); err != nil {
			bad("%v", err)
			return
		}
	case "expire-sessions":
		h.mu.Lock()
		n := len(h.sessions)
		h.sessions = map[string]time.Time{}
		h.mu.Unlock()
		reply(http.StatusOK, map[string]int{"expired": n})
		return
	case "reset":
		h.release("")
		h.resetRules()
		_ = setGuestIdentity("uuid")
		if h.guestOps != nil {
			h.guestOps.resetCalls()
		}
	default:
		reply(http.StatusNotFound, map[string]string{"error": "unknown harness endpoint /_harness/" + op})
		return
	}
	reply(http.StatusOK, map[string]bool{"ok": true})
}

// entityName is used in messages about managed objects.
func entityName(ref types.ManagedObjectReference) string {
	if e, ok := simulator.Map.Get(ref).(mo.Entity); ok {
		return e.Entity().Name
	}
	return ref.Value
}
