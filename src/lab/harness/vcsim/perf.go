package main

// Performance counters of a VM's virtual disks and datastores, as a real ESXi/vCenter offers them.
// govmomi 0.24's PerformanceManager (simulator/performance_manager.go) lists for a VM only its
// template's metric ids: no virtualDisk.* at all in the vCenter model, and datastore.* with the
// datastore's managed object id as instance; its QueryPerf returns no sample when maxSample is
// unset and a series for any counter asked, offered or not. The values stay SYNTHETIC (the
// simulator's cyclic series with noise): they test the plumbing, never a measurement.
//
// What this file changes, each after the API reference:
//   - QueryAvailablePerfMetric(VM): virtualDisk.* per virtual disk, instance "<type><bus>:<unit>"
//     (e.g. "scsi0:1"), and datastore.* per datastore holding one of its disks, instance = the
//     datastore's uuid (VMFS: info.vmfs.uuid, as in ds:///vmfs/volumes/<uuid>/; otherwise the last
//     segment of its URL). ["Virtual Disk Counters": entity VirtualMachine, per instance;
//     "Datastore Counters": entity VirtualMachine/HostSystem, per instance; PerfMetricId.instance:
//     "the name of the device"; public PowerCLI scripts map the datastore instance to
//     Info.Vmfs.Uuid.]
//   - QueryPerf(VM): only offered (counter, instance) pairs are answered; instance "*" means
//     every instance of the counter; no metricId means every offered metric; maxSample unset
//     means every sample from startTime on (the real-time store keeps one hour: 180 samples).
//     [pyvmomi docs/vim/PerformanceManager/QuerySpec.rst: maxSample, metricId; MetricId.rst: "*"]
//   - synthetic series for the counters the simulator has no data for (virtualDisk/datastore
//     IOPS, KBps and latency), so the figures are neither all zero nor real.
//   - the virtual disk's microsecond latency counters virtualDisk.readLatencyUS/writeLatencyUS
//     (unit microsecond, stats absolute, rollup latest) are offered per virtual disk from release
//     6.5 on: both counter tables govmomi captured from real servers list them (esx/ and
//     vpx/performance_manager.go; vpx is vCenter 6.5) [real-product-rules.md §5]. Whether a 5.5
//     host has them is unverified: the 5.5 profile withholds them, so the toolkit's whole-ms path
//     (and what it says about it) is exercised there. Their synthetic values are µs that the
//     whole-ms series would round to (0–1 ms reads on flash, as the issue that asked for them saw).
//
// Counter ids are looked up by group.name.rollup in the simulator's own perfCounter table, never
// hard-coded: vCenter and ESXi models number them differently.

import (
	"strconv"
	"strings"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/simulator/esx"
	"github.com/vmware/govmomi/simulator/vpx"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

type perfManager struct {
	*simulator.PerformanceManager
	counters map[string]int32 // group.name.rollup → key
}

// Get hands the property collector the managed object (perfCounter, historicalInterval…).
func (p *perfManager) Get() mo.Reference { return &p.PerformanceManager.PerformanceManager }

var diskCounterNames = []string{"numberReadAveraged", "numberWriteAveraged", "read", "write", "totalReadLatency", "totalWriteLatency"}

// the virtual disk's µs latency counters (rollup latest), offered from 6.5 on (see the top)
var microLatencyNames = []string{"readLatencyUS", "writeLatencyUS"}

func microLatencyOffered() bool { return labProfile.atLeast(6, 5) }

// synthetic values (a cycle the simulator walks with noise): IOPS, KBps, ms
var syntheticSeries = map[string][]int64{
	"numberReadAveraged":  {420, 455, 398, 431, 447},
	"numberWriteAveraged": {180, 166, 193, 172, 185},
	"read":                {1680, 1820, 1592, 1724, 1788},
	"write":               {720, 664, 772, 688, 740},
	"totalReadLatency":    {2, 3, 2, 2, 3},
	"totalWriteLatency":   {4, 3, 5, 4, 4},
	// µs, rounding to the whole-ms series above
	"readLatencyUS":  {2140, 2610, 1980, 2230, 2720},
	"writeLatencyUS": {3870, 3310, 4650, 4120, 3940},
}

func installPerf(esxModel bool) {
	sc := simulator.Map.Get(types.ManagedObjectReference{Type: "ServiceInstance", Value: "ServiceInstance"}).(*simulator.ServiceInstance).Content
	orig, ok := simulator.Map.Get(*sc.PerfManager).(*simulator.PerformanceManager)
	if !ok {
		return
	}
	p := &perfManager{PerformanceManager: orig, counters: map[string]int32{}}
	for _, c := range orig.PerfCounter {
		p.counters[c.GroupInfo.GetElementDescription().Key+"."+c.NameInfo.GetElementDescription().Key+"."+string(c.RollupType)] = c.Key
	}
	data := vpx.VmMetricData
	if esxModel {
		data = esx.MetricData["VirtualMachine"]
	}
	for _, group := range []string{"virtualDisk", "datastore"} {
		for _, name := range diskCounterNames {
			if key, ok := p.counters[group+"."+name+".average"]; ok && data != nil {
				if _, has := data[key]; !has {
					data[key] = syntheticSeries[name]
				}
			}
		}
	}
	for _, name := range microLatencyNames {
		if key, ok := p.counters["virtualDisk."+name+".latest"]; ok && data != nil {
			if _, has := data[key]; !has {
				data[key] = syntheticSeries[name]
			}
		}
	}
	simulator.Map.Put(p)
}

// diskInstances: each virtual disk's counter instance and the datastore instances holding them.
func diskInstances(vm *simulator.VirtualMachine) (disks []string, datastores []string) {
	devices := vm.Config.Hardware.Device
	byKey := map[int32]types.BaseVirtualDevice{}
	for _, d := range devices {
		byKey[d.GetVirtualDevice().Key] = d
	}
	seen := map[string]bool{}
	for _, d := range devices {
		disk, ok := d.(*types.VirtualDisk)
		if !ok || disk.UnitNumber == nil {
			continue
		}
		ctl, ok := byKey[disk.ControllerKey].(types.BaseVirtualController)
		if !ok {
			continue
		}
		prefix := ""
		switch byKey[disk.ControllerKey].(type) {
		case types.BaseVirtualSCSIController:
			prefix = "scsi"
		case types.BaseVirtualSATAController:
			prefix = "sata"
		case *types.VirtualNVMEController:
			prefix = "nvme"
		case *types.VirtualIDEController:
			prefix = "ide"
		default:
			continue
		}
		disks = append(disks, prefix+strconv.Itoa(int(ctl.GetVirtualController().BusNumber))+":"+strconv.Itoa(int(*disk.UnitNumber)))
		if b, ok := disk.Backing.(types.BaseVirtualDeviceFileBackingInfo); ok {
			ref := b.GetVirtualDeviceFileBackingInfo().Datastore
			if ref == nil {
				continue
			}
			if ds, ok := simulator.Map.Get(*ref).(*simulator.Datastore); ok {
				id := datastoreInstance(ds)
				if id != "" && !seen[id] {
					seen[id] = true
					datastores = append(datastores, id)
				}
			}
		}
	}
	return disks, datastores
}

func datastoreInstance(ds *simulator.Datastore) string {
	if info, ok := ds.Info.(*types.VmfsDatastoreInfo); ok && info.Vmfs != nil && info.Vmfs.Uuid != "" {
		return info.Vmfs.Uuid
	}
	u := strings.TrimRight(ds.Summary.Url, "/")
	return u[strings.LastIndex(u, "/")+1:]
}

func (p *perfManager) vmMetrics(vm *simulator.VirtualMachine, original []types.PerfMetricId) []types.PerfMetricId {
	dsKeys := map[int32]bool{}
	for _, name := range diskCounterNames {
		dsKeys[p.counters["datastore."+name+".average"]] = true
	}
	out := make([]types.PerfMetricId, 0, len(original))
	for _, m := range original {
		if !dsKeys[m.CounterId] { // the simulator's datastore instances (a moref value) are replaced below
			out = append(out, m)
		}
	}
	disks, datastores := diskInstances(vm)
	// the simulator's own template may list the µs counters without instances; what is offered per
	// disk is decided here, per release
	micro := map[int32]bool{}
	for _, name := range microLatencyNames {
		micro[p.counters["virtualDisk."+name+".latest"]] = true
	}
	kept := out[:0]
	for _, m := range out {
		if !micro[m.CounterId] {
			kept = append(kept, m)
		}
	}
	out = kept
	if microLatencyOffered() {
		for _, name := range microLatencyNames {
			if key, ok := p.counters["virtualDisk."+name+".latest"]; ok {
				for _, inst := range disks {
					out = append(out, types.PerfMetricId{CounterId: key, Instance: inst})
				}
			}
		}
	}
	for _, name := range diskCounterNames {
		if key, ok := p.counters["virtualDisk."+name+".average"]; ok {
			for _, inst := range disks {
				out = append(out, types.PerfMetricId{CounterId: key, Instance: inst})
			}
		}
		if key, ok := p.counters["datastore."+name+".average"]; ok {
			for _, inst := range datastores {
				out = append(out, types.PerfMetricId{CounterId: key, Instance: inst})
			}
		}
	}
	return out
}

func (p *perfManager) QueryAvailablePerfMetric(ctx *simulator.Context, req *types.QueryAvailablePerfMetric) soap.HasFault {
	res := p.PerformanceManager.QueryAvailablePerfMetric(ctx, req)
	body, ok := res.(*methods.QueryAvailablePerfMetricBody)
	if !ok || body.Res == nil || req.Entity.Type != "VirtualMachine" {
		return res
	}
	vm, ok := simulator.Map.Get(req.Entity).(*simulator.VirtualMachine)
	if !ok {
		return res
	}
	body.Res.Returnval = p.vmMetrics(vm, body.Res.Returnval)
	return body
}

func (p *perfManager) QueryPerf(ctx *simulator.Context, req *types.QueryPerf) soap.HasFault {
	specs := make([]types.PerfQuerySpec, len(req.QuerySpec))
	for i, qs := range req.QuerySpec {
		if qs.MaxSample == 0 {
			qs.MaxSample = 180
		}
		if qs.Entity.Type == "VirtualMachine" {
			if vm, ok := simulator.Map.Get(qs.Entity).(*simulator.VirtualMachine); ok {
				avail := p.PerformanceManager.QueryAvailablePerfMetric(ctx, &types.QueryAvailablePerfMetric{This: req.This, Entity: qs.Entity, IntervalId: qs.IntervalId})
				var offered []types.PerfMetricId
				if b, ok := avail.(*methods.QueryAvailablePerfMetricBody); ok && b.Res != nil {
					offered = p.vmMetrics(vm, b.Res.Returnval)
				}
				qs.MetricId = pickOffered(qs.MetricId, offered)
			}
		}
		specs[i] = qs
	}
	return p.PerformanceManager.QueryPerf(ctx, &types.QueryPerf{This: req.This, QuerySpec: specs})
}

func pickOffered(asked, offered []types.PerfMetricId) []types.PerfMetricId {
	if len(asked) == 0 {
		return offered
	}
	var out []types.PerfMetricId
	for _, a := range asked {
		for _, o := range offered {
			if o.CounterId == a.CounterId && (a.Instance == "*" || a.Instance == o.Instance) {
				out = append(out, o)
			}
		}
	}
	return out
}
