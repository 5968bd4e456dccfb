package main

import (
	"crypto/rand"
	"encoding/hex"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// pagingCollector makes RetrievePropertiesEx honour options.maxObjects and adds the
// Continue/Cancel methods, as vCenter does. vcsim creates a fresh value of the registered
// collector type per session (reflect.New), so page state lives in a package-level table.
type pagingCollector struct {
	simulator.PropertyCollector
	// change detection (waitupdates.go)
	w waitState
}

type pageState struct {
	rest     []types.ObjectContent
	pageSize int
}

var (
	pagesMu sync.Mutex
	pages   = map[string]*pageState{}
)

func installPaging() {
	ref := simulator.Map.Get(simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}).(*simulator.ServiceInstance).Content.PropertyCollector)
	pc := &pagingCollector{}
	pc.Self = ref.Reference()
	// A fresh value (no copy) avoids copying the collector's mutex; no filters exist yet.
	simulator.Map.Put(pc)
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func takePage(objs []types.ObjectContent, size int) (types.RetrieveResult, bool) {
	if len(objs) <= size {
		return types.RetrieveResult{Objects: objs}, false
	}
	tok := newToken()
	pagesMu.Lock()
	pages[tok] = &pageState{rest: objs[size:], pageSize: size}
	pagesMu.Unlock()
	return types.RetrieveResult{Token: tok, Objects: objs[:size]}, true
}

func (pc *pagingCollector) RetrievePropertiesEx(ctx *simulator.Context, req *types.RetrievePropertiesEx) soap.HasFault {
	res := pc.PropertyCollector.RetrievePropertiesEx(ctx, req)
	body, ok := res.(*methods.RetrievePropertiesExBody)
	if !ok || body.Fault_ != nil || body.Res == nil || body.Res.Returnval == nil {
		return res
	}
	max := int(req.Options.MaxObjects)
	if max <= 0 {
		return res
	}
	page, _ := takePage(body.Res.Returnval.Objects, max)
	body.Res.Returnval = &page
	return body
}

func (pc *pagingCollector) ContinueRetrievePropertiesEx(ctx *simulator.Context, req *types.ContinueRetrievePropertiesEx) soap.HasFault {
	body := &methods.ContinueRetrievePropertiesExBody{}
	pagesMu.Lock()
	st, ok := pages[req.Token]
	delete(pages, req.Token)
	pagesMu.Unlock()
	if !ok {
		body.Fault_ = invalidArgument("token")
		return body
	}
	page, _ := takePage(st.rest, st.pageSize)
	body.Res = &types.ContinueRetrievePropertiesExResponse{Returnval: page}
	return body
}

func (pc *pagingCollector) CancelRetrievePropertiesEx(ctx *simulator.Context, req *types.CancelRetrievePropertiesEx) soap.HasFault {
	body := &methods.CancelRetrievePropertiesExBody{}
	pagesMu.Lock()
	_, ok := pages[req.Token]
	delete(pages, req.Token)
	pagesMu.Unlock()
	if !ok {
		body.Fault_ = invalidArgument("token")
		return body
	}
	body.Res = &types.CancelRetrievePropertiesExResponse{}
	return body
}

// CreatePropertyCollector hands out paging collectors too, so private collectors page alike.
func (pc *pagingCollector) CreatePropertyCollector(ctx *simulator.Context, req *types.CreatePropertyCollector) soap.HasFault {
	npc := &pagingCollector{}
	// Session.Put would otherwise name the MoRef type after our Go type.
	npc.Self.Type = "PropertyCollector"
	return &methods.CreatePropertyCollectorBody{
		Res: &types.CreatePropertyCollectorResponse{Returnval: ctx.Session.Put(npc).Reference()},
	}
}
