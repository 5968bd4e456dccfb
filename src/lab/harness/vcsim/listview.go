package main

// ListView.ModifyListView as vCenter answers it. The vSphere API reference
// (vim.view.ListView, method ModifyListView; the same text from the 5.1 reference to 8.0U3,
// https://developer.broadcom.com/xapis/vsphere-web-services-api/latest/vim.view.ListView.html):
// "Adds and/or removes objects from the ListView. … May partially succeed if some objects could
// not be resolved. The operation will still succeed for all objects which could be resolved, and
// the list of those which failed is returned as the result." Its return value: "A list containing
// any objects in 'add' that could not be resolved." A view's `view` is the set of objects it
// shows, not a list with repeats.
//
// govmomi 0.24's simulator (simulator/view_manager.go, ListView.add / ModifyListView) instead
// faults ManagedObjectNotFound at the first unknown object, after having applied the removals and
// appended the adds before it, and appends an object already in the view a second time. Here a
// ModifyListView applies every removal, adds each resolvable object once, returns the unresolved
// ones, and makes one change to `view`. CreateListView is left as the simulator has it (its
// `obj` faults are not documented either way); it only makes views of this type.

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type harnessViewManager struct {
	simulator.ViewManager
}

type harnessListView struct {
	simulator.ListView
}

func installListViews() {
	sc := simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}).(*simulator.ServiceInstance).Content
	old := simulator.Map.Get(*sc.ViewManager).(*simulator.ViewManager)
	// A copy keeps the simulator's table of entity types (CreateContainerView uses it); the
	// ViewManager holds no lock of its own.
	simulator.Map.Put(&harnessViewManager{ViewManager: *old})
}

// CreateListView makes the view as the simulator does, as a harnessListView.
func (m *harnessViewManager) CreateListView(ctx *simulator.Context, req *types.CreateListView) soap.HasFault {
	body := new(methods.CreateListViewBody)
	list := &harnessListView{}
	for _, ref := range req.Obj {
		if simulator.Map.Get(ref) == nil {
			body.Fault_ = simulator.Fault("", &types.ManagedObjectNotFound{Obj: ref})
			return body
		}
		if !containsRef(list.View, ref) {
			list.View = append(list.View, ref)
		}
	}
	// Session.Put would otherwise name the MoRef type after our Go type.
	list.Self.Type = "ListView"
	ctx.Session.Put(list)
	body.Res = &types.CreateListViewResponse{Returnval: list.Self}
	return body
}

// ModifyListView: every removal, each resolvable add once, the unresolved adds returned.
func (v *harnessListView) ModifyListView(req *types.ModifyListView) soap.HasFault {
	body := new(methods.ModifyListViewBody)
	view := append([]types.ManagedObjectReference(nil), v.View...)
	for _, ref := range req.Remove {
		simulator.RemoveReference(&view, ref)
	}
	var unresolved []types.ManagedObjectReference
	for _, ref := range req.Add {
		if simulator.Map.Get(ref) == nil {
			unresolved = append(unresolved, ref)
			continue
		}
		if !containsRef(view, ref) {
			view = append(view, ref)
		}
	}
	if len(req.Remove) != 0 || len(req.Add) != 0 {
		v.View = view
		simulator.Map.Update(v, []types.PropertyChange{{Name: "view", Val: view}})
	}
	body.Res = &types.ModifyListViewResponse{Returnval: unresolved}
	return body
}

func containsRef(list []types.ManagedObjectReference, ref types.ManagedObjectReference) bool {
	for _, r := range list {
		if r == ref {
			return true
		}
	}
	return false
}
