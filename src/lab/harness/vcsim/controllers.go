package main

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

func controllerRules(vm *simulator.VirtualMachine, req *types.ReconfigVM_Task) (bool, types.BaseMethodFault) {
	return false, nil
}
