package main

import (
	"bytes"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// reconfigRules applies what a real host checks in a ReconfigVM_Task before the simulator sees
// it (NFS provisioning: nfs.go; controllers and unit numbers: controllers.go; thick disks'
// space: capacity.go). It returns the
// request body (re-encoded when a rule changed the request) or the fault the task fails with.
func reconfigRules(req *types.ReconfigVM_Task, body []byte) ([]byte, types.BaseMethodFault) {
	vm, ok := simulator.Map.Get(req.This).(*simulator.VirtualMachine)
	if !ok || vm.Config == nil {
		return body, nil
	}
	changed := false
	for _, rule := range []func(*simulator.VirtualMachine, *types.ReconfigVM_Task) (bool, types.BaseMethodFault){controllerRules, nfsProvisioning, capacityRules} {
		c, f := rule(vm, req)
		if f != nil {
			return body, f
		}
		changed = changed || c
	}
	if !changed {
		return body, nil
	}
	var out bytes.Buffer
	out.WriteString(xml.Header)
	env := soap.Envelope{Body: &methods.ReconfigVM_TaskBody{Req: req}}
	if err := xml.NewEncoder(&out).Encode(&env); err != nil {
		return body, nil
	}
	return out.Bytes(), nil
}
