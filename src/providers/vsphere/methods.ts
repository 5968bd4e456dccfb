// One function per vim25 method we call: parameters in WSDL order, result decoded to typed values.
import { forgetDevices } from './known-devices.ts';
import type { MoRef, RoundTripper } from './soap.ts';
import {
  decodeReturn,
  toSoap,
  type DataObject,
  type FileTransferInformation,
  type GuestProcessInfo,
  type HostScsiDisk,
  type PerfEntityMetric,
  type PerfMetricId,
  type RetrieveResult,
  type ServiceContent,
  type UpdateSet,
  type UserSession,
  type VmfsConfigOption,
  type VmfsDatastoreOption,
} from './types.ts';

export type { RoundTripper } from './soap.ts';

const SERVICE_INSTANCE: MoRef = { type: 'ServiceInstance', value: 'ServiceInstance' };

export async function retrieveServiceContent(rt: RoundTripper): Promise<ServiceContent> {
  const r = await rt.roundTrip('RetrieveServiceContent', SERVICE_INSTANCE, []);
  return decodeReturn(r, 'ServiceContent') as ServiceContent;
}

export async function login(rt: RoundTripper, sessionManager: MoRef, userName: string, password: string): Promise<UserSession> {
  const r = await rt.roundTrip('Login', sessionManager, [
    ['userName', userName],
    ['password', password],
  ]);
  return decodeReturn(r, 'UserSession') as UserSession;
}

export async function logout(rt: RoundTripper, sessionManager: MoRef): Promise<void> {
  await rt.roundTrip('Logout', sessionManager, []);
}

export async function currentTime(rt: RoundTripper): Promise<string> {
  const r = await rt.roundTrip('CurrentTime', SERVICE_INSTANCE, []);
  return decodeReturn(r, 'dateTime') as string;
}

// --- performance manager (perf.ts)

export async function queryPerfProviderSummary(rt: RoundTripper, pm: MoRef, entity: MoRef): Promise<{ currentSupported: boolean; summarySupported: boolean; refreshRate?: number }> {
  const r = await rt.roundTrip('QueryPerfProviderSummary', pm, [['entity', entity]]);
  return decodeReturn(r, 'PerfProviderSummary') as { currentSupported: boolean; summarySupported: boolean; refreshRate?: number };
}

export async function queryAvailablePerfMetric(rt: RoundTripper, pm: MoRef, entity: MoRef, intervalId: number): Promise<PerfMetricId[]> {
  const r = await rt.roundTrip('QueryAvailablePerfMetric', pm, [
    ['entity', entity],
    ['intervalId', intervalId],
  ]);
  return decodeReturn(r, 'PerfMetricId[]') as PerfMetricId[];
}

export async function queryPerf(rt: RoundTripper, pm: MoRef, querySpec: DataObject[]): Promise<PerfEntityMetric[]> {
  const r = await rt.roundTrip('QueryPerf', pm, [['querySpec', toSoap(querySpec, 'PerfQuerySpec')]]);
  return decodeReturn(r, 'PerfEntityMetricBase[]') as PerfEntityMetric[];
}

// --- property collector

export async function retrievePropertiesEx(rt: RoundTripper, pc: MoRef, specSet: DataObject[], maxObjects?: number): Promise<RetrieveResult | undefined> {
  const r = await rt.roundTrip('RetrievePropertiesEx', pc, [
    ['specSet', toSoap(specSet, 'PropertyFilterSpec')],
    ['options', toSoap(maxObjects === undefined ? {} : { maxObjects }, 'RetrieveOptions')],
  ]);
  return decodeReturn(r, 'RetrieveResult') as RetrieveResult | undefined;
}

export async function continueRetrievePropertiesEx(rt: RoundTripper, pc: MoRef, token: string): Promise<RetrieveResult | undefined> {
  const r = await rt.roundTrip('ContinueRetrievePropertiesEx', pc, [['token', token]]);
  return decodeReturn(r, 'RetrieveResult') as RetrieveResult | undefined;
}

export async function cancelRetrievePropertiesEx(rt: RoundTripper, pc: MoRef, token: string): Promise<void> {
  await rt.roundTrip('CancelRetrievePropertiesEx', pc, [['token', token]]);
}

export async function createPropertyCollector(rt: RoundTripper, pc: MoRef): Promise<MoRef> {
  return decodeReturn(await rt.roundTrip('CreatePropertyCollector', pc, []), 'moref') as MoRef;
}

export async function destroyPropertyCollector(rt: RoundTripper, pc: MoRef): Promise<void> {
  await rt.roundTrip('DestroyPropertyCollector', pc, []);
}

export async function createFilter(rt: RoundTripper, pc: MoRef, spec: DataObject, partialUpdates: boolean): Promise<MoRef> {
  const r = await rt.roundTrip('CreateFilter', pc, [
    ['spec', toSoap(spec, 'PropertyFilterSpec')],
    ['partialUpdates', partialUpdates],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function destroyPropertyFilter(rt: RoundTripper, filter: MoRef): Promise<void> {
  await rt.roundTrip('DestroyPropertyFilter', filter, []);
}

export async function cancelWaitForUpdates(rt: RoundTripper, pc: MoRef): Promise<void> {
  await rt.roundTrip('CancelWaitForUpdates', pc, []);
}

export async function waitForUpdatesEx(rt: RoundTripper, pc: MoRef, version: string, options: { maxWaitSeconds?: number; maxObjectUpdates?: number }): Promise<UpdateSet | undefined> {
  const r = await rt.roundTrip('WaitForUpdatesEx', pc, [
    ['version', version],
    ['options', toSoap(options, 'WaitOptions')],
  ]);
  return decodeReturn(r, 'UpdateSet') as UpdateSet | undefined;
}

export async function createContainerView(rt: RoundTripper, viewManager: MoRef, container: MoRef, types: string[], recursive: boolean): Promise<MoRef> {
  const r = await rt.roundTrip('CreateContainerView', viewManager, [
    ['container', container],
    ['type', types],
    ['recursive', recursive],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function createListView(rt: RoundTripper, viewManager: MoRef, objs: MoRef[]): Promise<MoRef> {
  return decodeReturn(await rt.roundTrip('CreateListView', viewManager, [['obj', objs]]), 'moref') as MoRef;
}

/** ModifyListView: "A list containing any objects in 'add' that could not be resolved" (vSphere API, ListView). */
export async function modifyListView(rt: RoundTripper, view: MoRef, add: MoRef[], remove: MoRef[]): Promise<MoRef[]> {
  const r = await rt.roundTrip('ModifyListView', view, [
    ['add', add],
    ['remove', remove],
  ]);
  return decodeReturn(r, 'moref[]') as MoRef[];
}

export async function destroyView(rt: RoundTripper, view: MoRef): Promise<void> {
  await rt.roundTrip('DestroyView', view, []);
}

export async function findByInventoryPath(rt: RoundTripper, searchIndex: MoRef, inventoryPath: string): Promise<MoRef | undefined> {
  const r = await rt.roundTrip('FindByInventoryPath', searchIndex, [['inventoryPath', inventoryPath]]);
  return decodeReturn(r, 'moref') as MoRef | undefined;
}

// --- storage

export async function queryAvailableDisksForVmfs(rt: RoundTripper, dss: MoRef): Promise<HostScsiDisk[]> {
  const r = await rt.roundTrip('QueryAvailableDisksForVmfs', dss, []);
  return decodeReturn(r, 'HostScsiDisk[]') as HostScsiDisk[];
}

export async function queryVmfsDatastoreCreateOptions(rt: RoundTripper, dss: MoRef, devicePath: string, vmfsMajorVersion?: number): Promise<VmfsDatastoreOption[]> {
  const r = await rt.roundTrip('QueryVmfsDatastoreCreateOptions', dss, [
    ['devicePath', devicePath],
    ['vmfsMajorVersion', vmfsMajorVersion],
  ]);
  return decodeReturn(r, 'VmfsDatastoreOption[]') as VmfsDatastoreOption[];
}

/** QueryVmfsConfigOption (since 6.5): the VMFS6 block sizes and, for each, its unmap granularities. */
export async function queryVmfsConfigOption(rt: RoundTripper, dss: MoRef): Promise<VmfsConfigOption[]> {
  const r = await rt.roundTrip('QueryVmfsConfigOption', dss, []);
  return decodeReturn(r, 'VmfsConfigOption[]') as VmfsConfigOption[];
}

export async function createVmfsDatastore(rt: RoundTripper, dss: MoRef, spec: DataObject): Promise<MoRef> {
  const r = await rt.roundTrip('CreateVmfsDatastore', dss, [['spec', toSoap({ ...spec, _type: undefined }, 'VmfsDatastoreCreateSpec')]]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function createNasDatastore(rt: RoundTripper, dss: MoRef, spec: DataObject): Promise<MoRef> {
  const r = await rt.roundTrip('CreateNasDatastore', dss, [['spec', toSoap(spec, 'HostNasVolumeSpec')]]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function removeDatastore(rt: RoundTripper, dss: MoRef, datastore: MoRef): Promise<void> {
  await rt.roundTrip('RemoveDatastore', dss, [['datastore', datastore]]);
}

export async function deleteVirtualDiskTask(rt: RoundTripper, vdm: MoRef, name: string, datacenter?: MoRef): Promise<MoRef> {
  const r = await rt.roundTrip('DeleteVirtualDisk_Task', vdm, [
    ['name', name],
    ['datacenter', datacenter],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function searchDatastoreTask(rt: RoundTripper, browser: MoRef, datastorePath: string, spec: DataObject): Promise<MoRef> {
  const r = await rt.roundTrip('SearchDatastore_Task', browser, [
    ['datastorePath', datastorePath],
    ['searchSpec', toSoap(spec, 'HostDatastoreBrowserSearchSpec')],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

export async function deleteDatastoreFileTask(rt: RoundTripper, fileManager: MoRef, name: string, datacenter?: MoRef): Promise<MoRef> {
  const r = await rt.roundTrip('DeleteDatastoreFile_Task', fileManager, [
    ['name', name],
    ['datacenter', datacenter],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

// --- virtual machines

export async function reconfigVMTask(rt: RoundTripper, vm: MoRef, spec: DataObject): Promise<MoRef> {
  // whatever this session knew of the VM's devices is stale from here (known-devices.ts)
  forgetDevices(rt, vm);
  const r = await rt.roundTrip('ReconfigVM_Task', vm, [['spec', toSoap(spec, 'VirtualMachineConfigSpec')]]);
  return decodeReturn(r, 'moref') as MoRef;
}

/**
 * CloneVM_Task (vim.VirtualMachine.clone): `folder` the new VM goes in, its `name`, and a
 * VirtualMachineCloneSpec (location, template, config, customization, powerOn, snapshot: WSDL order;
 * built in that order by clones.ts, which leaves powerOn false and powers the clone on itself).
 */
export async function cloneVMTask(rt: RoundTripper, vm: MoRef, folder: MoRef, name: string, spec: DataObject): Promise<MoRef> {
  const r = await rt.roundTrip('CloneVM_Task', vm, [
    ['folder', folder],
    ['name', name],
    ['spec', toSoap(spec, 'VirtualMachineCloneSpec')],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

/**
 * CreateSnapshot_Task (vim.VirtualMachine.createSnapshot): name, description, memory, quiesce in
 * WSDL order; returns the task (its result: the VirtualMachineSnapshot).
 */
export async function createSnapshotTask(rt: RoundTripper, vm: MoRef, name: string, o: { description: string; memory: boolean; quiesce: boolean }): Promise<MoRef> {
  const r = await rt.roundTrip('CreateSnapshot_Task', vm, [
    ['name', name],
    ['description', o.description],
    ['memory', o.memory],
    ['quiesce', o.quiesce],
  ]);
  return decodeReturn(r, 'moref') as MoRef;
}

/** RemoveSnapshot_Task (vim.vm.Snapshot.remove): this snapshot only (`removeChildren` false keeps its children). */
export async function removeSnapshotTask(rt: RoundTripper, snapshot: MoRef, removeChildren: boolean): Promise<MoRef> {
  return decodeReturn(await rt.roundTrip('RemoveSnapshot_Task', snapshot, [['removeChildren', removeChildren]]), 'moref') as MoRef;
}

/** Destroy_Task (vim.ManagedEntity.destroy): a VM, its files with it; the VM must be powered off (InvalidPowerState). */
export async function destroyTask(rt: RoundTripper, entity: MoRef): Promise<MoRef> {
  forgetDevices(rt, entity);
  return decodeReturn(await rt.roundTrip('Destroy_Task', entity, []), 'moref') as MoRef;
}

export async function powerOnVMTask(rt: RoundTripper, vm: MoRef): Promise<MoRef> {
  return decodeReturn(await rt.roundTrip('PowerOnVM_Task', vm, []), 'moref') as MoRef;
}

export async function powerOffVMTask(rt: RoundTripper, vm: MoRef): Promise<MoRef> {
  return decodeReturn(await rt.roundTrip('PowerOffVM_Task', vm, []), 'moref') as MoRef;
}

// --- guest operations (GuestOperationsManager.processManager / .fileManager; vSphere 5.0+).
// `auth` is a NamePasswordAuthentication: it travels in the request body only, never in a message.

export async function startProgramInGuest(rt: RoundTripper, pm: MoRef, vm: MoRef, auth: DataObject, spec: DataObject): Promise<number> {
  const r = await rt.roundTrip('StartProgramInGuest', pm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['spec', toSoap(spec, 'GuestProgramSpec')],
  ]);
  return decodeReturn(r, 'long') as number;
}

export async function listProcessesInGuest(rt: RoundTripper, pm: MoRef, vm: MoRef, auth: DataObject, pids?: number[]): Promise<GuestProcessInfo[]> {
  const r = await rt.roundTrip('ListProcessesInGuest', pm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['pids', pids],
  ]);
  return decodeReturn(r, 'GuestProcessInfo[]') as GuestProcessInfo[];
}

export async function terminateProcessInGuest(rt: RoundTripper, pm: MoRef, vm: MoRef, auth: DataObject, pid: number): Promise<void> {
  await rt.roundTrip('TerminateProcessInGuest', pm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['pid', pid],
  ]);
}

export async function initiateFileTransferToGuest(rt: RoundTripper, fm: MoRef, vm: MoRef, auth: DataObject, guestFilePath: string, fileAttributes: DataObject, fileSize: number, overwrite: boolean): Promise<string> {
  const r = await rt.roundTrip('InitiateFileTransferToGuest', fm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['guestFilePath', guestFilePath],
    ['fileAttributes', toSoap(fileAttributes, 'GuestFileAttributes')],
    ['fileSize', fileSize],
    ['overwrite', overwrite],
  ]);
  return decodeReturn(r, 'string') as string;
}

export async function initiateFileTransferFromGuest(rt: RoundTripper, fm: MoRef, vm: MoRef, auth: DataObject, guestFilePath: string): Promise<FileTransferInformation> {
  const r = await rt.roundTrip('InitiateFileTransferFromGuest', fm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['guestFilePath', guestFilePath],
  ]);
  return decodeReturn(r, 'FileTransferInformation') as FileTransferInformation;
}

export async function makeDirectoryInGuest(rt: RoundTripper, fm: MoRef, vm: MoRef, auth: DataObject, directoryPath: string, createParentDirectories: boolean): Promise<void> {
  await rt.roundTrip('MakeDirectoryInGuest', fm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['directoryPath', directoryPath],
    ['createParentDirectories', createParentDirectories],
  ]);
}

export async function deleteFileInGuest(rt: RoundTripper, fm: MoRef, vm: MoRef, auth: DataObject, filePath: string): Promise<void> {
  await rt.roundTrip('DeleteFileInGuest', fm, [
    ['vm', vm],
    ['auth', toSoap(auth, 'GuestAuthentication')],
    ['filePath', filePath],
  ]);
}
