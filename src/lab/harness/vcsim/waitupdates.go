package main

// WaitForUpdatesEx as vCenter answers it. govmomi 0.24's simulator falls short of the API in ways
// a client sharing one collector between many waits depends on:
//   - it locks the collector for the whole call, so a CreateFilter (or DestroyPropertyFilter) sent
//     while a long poll is under way waits for the poll to end; vCenter takes filters at any time
//     ("For change detection a client creates one or more filters", vSphere Web Services API,
//     PropertyCollector) and reports a new filter's objects in the wait under way;
//   - its version is always "-" after the first call, any other string is accepted, and an update
//     is looked for only on a 250 ms ticker; the API reference (WaitForUpdatesEx, parameter
//     `version`) requires "the special initial data version (an empty string) … or a non-truncated
//     data version returned from WaitForUpdatesEx by the same PropertyCollector on the same
//     session" and faults anything else with InvalidCollectorVersion ("thrown when a collector
//     version is out of date or invalid"); a waiting call returns when a change happens;
//   - a filter created after the first call reports its objects only when some other object
//     changes.
// Here each filter keeps what it last reported per object; a call computes, for every filter, the
// objects that entered (all their properties), changed (the properties whose value differs) or
// left, returns them with the next version number, or waits until something changes (the
// simulator tells every RegisterObject handler of each Put/Update/Remove, changeFeed below), a
// filter is added, maxWaitSeconds pass (then it returns no UpdateSet, as documented: "the number
// of seconds to wait for updates before returning a null result"; 0 = one calculation), or
// CancelWaitForUpdates / DestroyPropertyCollector cancel it (RequestCanceled, as documented).
// A change made without the registry's Update (some harness code writes fields directly) is seen
// by the 250 ms re-check the simulator used as its only means. Only the newest version is
// accepted: a client that lost a reply starts again from "".

import (
	"context"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// changeFeed wakes waiting calls: a channel closed (and replaced) on every change.
type changeFeed struct {
	mu sync.Mutex
	ch chan struct{}
}

var feed = &changeFeed{ch: make(chan struct{})}

func (f *changeFeed) Reference() types.ManagedObjectReference {
	return types.ManagedObjectReference{Type: "HarnessChangeFeed", Value: "harness-change-feed"}
}
func (f *changeFeed) PutObject(mo.Reference)                             { f.bump() }
func (f *changeFeed) UpdateObject(mo.Reference, []types.PropertyChange) { f.bump() }
func (f *changeFeed) RemoveObject(types.ManagedObjectReference)         { f.bump() }

func (f *changeFeed) bump() {
	f.mu.Lock()
	close(f.ch)
	f.ch = make(chan struct{})
	f.mu.Unlock()
}

func (f *changeFeed) next() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ch
}

func installWaitForUpdates() {
	simulator.Map.AddHandler(feed)
}

// waitState is a collector's change-detection state (zero value ready: vcsim makes the
// per-session default collector with reflect.New).
type waitState struct {
	mu      sync.Mutex
	filters []*harnessFilter
	version int
	waits   map[*context.CancelFunc]struct{}
	gone    bool
}

// harnessFilter is a PropertyFilter on a pagingCollector.
type harnessFilter struct {
	mo.PropertyFilter
	pc *pagingCollector
	// per object, the property values last reported; nil until reported
	seen map[types.ManagedObjectReference]map[string]interface{}
}

// Lock and Unlock opt the collector out of the simulator's per-object lock (Registry.WithLock
// uses an object's own sync.Locker): its state has its own mutex, so a long poll does not hold
// back CreateFilter, DestroyPropertyFilter or RetrievePropertiesEx on the same collector.
func (pc *pagingCollector) Lock()   {}
func (pc *pagingCollector) Unlock() {}

func (pc *pagingCollector) CreateFilter(ctx *simulator.Context, c *types.CreateFilter) soap.HasFault {
	body := &methods.CreateFilterBody{}
	f := &harnessFilter{pc: pc}
	f.Self.Type = "PropertyFilter" // Session.Put would name it after the Go type
	f.Spec = c.Spec
	f.PartialUpdates = c.PartialUpdates
	ref := ctx.Session.Put(f).Reference()
	pc.w.mu.Lock()
	pc.w.filters = append(pc.w.filters, f)
	pc.Filter = append(pc.Filter, ref)
	pc.w.mu.Unlock()
	feed.bump()
	body.Res = &types.CreateFilterResponse{Returnval: ref}
	return body
}

func (f *harnessFilter) DestroyPropertyFilter(ctx *simulator.Context, c *types.DestroyPropertyFilter) soap.HasFault {
	pc := f.pc
	pc.w.mu.Lock()
	for i, g := range pc.w.filters {
		if g == f {
			pc.w.filters = append(pc.w.filters[:i:i], pc.w.filters[i+1:]...)
			break
		}
	}
	refs := pc.Filter[:0:0]
	for _, r := range pc.Filter {
		if r != f.Self {
			refs = append(refs, r)
		}
	}
	pc.Filter = refs
	pc.w.mu.Unlock()
	ctx.Session.Remove(c.This)
	return &methods.DestroyPropertyFilterBody{Res: &types.DestroyPropertyFilterResponse{}}
}

func (pc *pagingCollector) CancelWaitForUpdates(ctx *simulator.Context, r *types.CancelWaitForUpdates) soap.HasFault {
	pc.w.mu.Lock()
	for c := range pc.w.waits {
		(*c)()
	}
	pc.w.mu.Unlock()
	return &methods.CancelWaitForUpdatesBody{Res: new(types.CancelWaitForUpdatesResponse)}
}

func (pc *pagingCollector) DestroyPropertyCollector(ctx *simulator.Context, c *types.DestroyPropertyCollector) soap.HasFault {
	pc.w.mu.Lock()
	pc.w.gone = true
	for cancel := range pc.w.waits {
		(*cancel)()
	}
	filters := pc.w.filters
	pc.w.filters = nil
	pc.Filter = nil
	pc.w.mu.Unlock()
	for _, f := range filters {
		ctx.Session.Remove(f.Self)
	}
	ctx.Session.Remove(c.This)
	return &methods.DestroyPropertyCollectorBody{Res: &types.DestroyPropertyCollectorResponse{}}
}

func (pc *pagingCollector) WaitForUpdatesEx(ctx *simulator.Context, r *types.WaitForUpdatesEx) soap.HasFault {
	body := &methods.WaitForUpdatesExBody{}
	var maxWait *int32
	if r.Options != nil {
		maxWait = r.Options.MaxWaitSeconds
	}
	set, fault := pc.waitForUpdates(ctx, r.Version, maxWait)
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	body.Res = &types.WaitForUpdatesExResponse{Returnval: set}
	return body
}

// WaitForUpdates (deprecated; pyVmomi's WaitForTask and Ansible use it): waits without limit.
func (pc *pagingCollector) WaitForUpdates(ctx *simulator.Context, r *types.WaitForUpdates) soap.HasFault {
	body := &methods.WaitForUpdatesBody{}
	set, fault := pc.waitForUpdates(ctx, r.Version, nil)
	if fault == nil && set == nil {
		fault = new(types.RequestCanceled)
	}
	if fault != nil {
		body.Fault_ = simulator.Fault("", fault)
		return body
	}
	body.Res = &types.WaitForUpdatesResponse{Returnval: *set}
	return body
}

func (pc *pagingCollector) waitForUpdates(ctx *simulator.Context, version string, maxWait *int32) (*types.UpdateSet, types.BaseMethodFault) {
	wctx, cancel := context.WithCancel(context.Background())
	timedOut := false
	if maxWait != nil && *maxWait > 0 {
		wctx, cancel = context.WithTimeout(context.Background(), time.Duration(*maxWait)*time.Second)
	}
	defer cancel()
	pc.w.mu.Lock()
	if pc.w.gone {
		pc.w.mu.Unlock()
		return nil, new(types.RequestCanceled)
	}
	if version != "" && version != strconv.Itoa(pc.w.version) {
		pc.w.mu.Unlock()
		return nil, new(types.InvalidCollectorVersion)
	}
	if pc.w.waits == nil {
		pc.w.waits = map[*context.CancelFunc]struct{}{}
	}
	pc.w.waits[&cancel] = struct{}{}
	if version == "" {
		// the client knows nothing: every filter reports all its objects again
		for _, f := range pc.w.filters {
			f.seen = nil
		}
	}
	pc.w.mu.Unlock()
	defer func() {
		pc.w.mu.Lock()
		delete(pc.w.waits, &cancel)
		pc.w.mu.Unlock()
	}()
	once := maxWait != nil && *maxWait == 0
	for {
		wake := feed.next()
		pc.w.mu.Lock()
		if pc.w.gone {
			pc.w.mu.Unlock()
			return nil, new(types.RequestCanceled)
		}
		updates, commit := pc.pendingUpdates(ctx)
		if len(updates) > 0 || version == "" {
			commit()
			pc.w.version++
			v := pc.w.version
			pc.w.mu.Unlock()
			return &types.UpdateSet{Version: strconv.Itoa(v), FilterSet: updates}, nil
		}
		pc.w.mu.Unlock()
		if once || timedOut {
			return nil, nil
		}
		select {
		case <-wake:
		case <-time.After(250 * time.Millisecond):
		case <-wctx.Done():
			if wctx.Err() != context.DeadlineExceeded {
				return nil, new(types.RequestCanceled)
			}
			// one last calculation, then the null result
			timedOut = true
		}
	}
}

// pendingUpdates is, per filter, what changed since it last reported; commit records it as
// reported. Called with pc.w.mu held.
func (pc *pagingCollector) pendingUpdates(ctx *simulator.Context) ([]types.PropertyFilterUpdate, func()) {
	var out []types.PropertyFilterUpdate
	var commits []func()
	for _, f := range pc.w.filters {
		now := map[types.ManagedObjectReference]map[string]interface{}{}
		var order []types.ManagedObjectReference
		res := pc.PropertyCollector.RetrievePropertiesEx(ctx, &types.RetrievePropertiesEx{SpecSet: []types.PropertyFilterSpec{f.Spec}})
		// an object that is gone is not collected: it leaves the filter
		if b, ok := res.(*methods.RetrievePropertiesExBody); ok && b.Res != nil && b.Res.Returnval != nil {
			for _, oc := range b.Res.Returnval.Objects {
				props := map[string]interface{}{}
				for _, p := range oc.PropSet {
					props[p.Name] = p.Val
				}
				now[oc.Obj] = props
				order = append(order, oc.Obj)
			}
		}
		fu := types.PropertyFilterUpdate{Filter: f.Self}
		for _, obj := range order {
			props := now[obj]
			old, had := f.seen[obj]
			ou := types.ObjectUpdate{Obj: obj, Kind: types.ObjectUpdateKindModify}
			if !had {
				ou.Kind = types.ObjectUpdateKindEnter
			}
			for _, name := range sortedKeys(props) {
				if had {
					if prev, ok := old[name]; ok && reflect.DeepEqual(prev, props[name]) {
						continue
					}
				}
				ou.ChangeSet = append(ou.ChangeSet, types.PropertyChange{Name: name, Op: types.PropertyChangeOpAssign, Val: props[name]})
			}
			if had {
				// a property that became unset
				for _, name := range sortedKeys(old) {
					if _, ok := props[name]; !ok {
						ou.ChangeSet = append(ou.ChangeSet, types.PropertyChange{Name: name, Op: types.PropertyChangeOpAssign})
					}
				}
			}
			if !had || len(ou.ChangeSet) > 0 {
				fu.ObjectSet = append(fu.ObjectSet, ou)
			}
		}
		for obj := range f.seen {
			if _, ok := now[obj]; !ok {
				fu.ObjectSet = append(fu.ObjectSet, types.ObjectUpdate{Obj: obj, Kind: types.ObjectUpdateKindLeave})
			}
		}
		if len(fu.ObjectSet) > 0 || f.seen == nil {
			if len(fu.ObjectSet) > 0 {
				out = append(out, fu)
			}
			f, now := f, now
			commits = append(commits, func() { f.seen = now })
		}
	}
	return out, func() {
		for _, c := range commits {
			c()
		}
	}
}

func sortedKeys(m map[string]interface{}) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}
