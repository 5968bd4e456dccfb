// The vim25 subset we use: a field schema (WSDL element order, primitive kinds, arrays, base
// types) that drives both decoding of XmlNode trees into typed values and ordering of request
// objects; plus TypeScript views of the values we read. Fields absent from the schema still
// decode (strings, nested objects, repeated elements → arrays), they are just not typed.
import { NS_XSD, isMoRef, type MoRef, type SoapValue, type XmlNode } from './soap.ts';

export type { MoRef };


/** a primitive kind or a data object type name; a trailing `[]` marks a repeated element */
type FieldType = string;
interface TypeDef {
  base?: string;
  fields: Array<[string, FieldType]>;
}

const T: Record<string, TypeDef> = {};
function def(name: string, base: string | undefined, fields: Array<[string, FieldType]>): void {
  T[name] = base ? { base, fields } : { fields };
}

// --- session / property collector
def('UserSession', undefined, [['key', 'string'], ['userName', 'string'], ['fullName', 'string'], ['loginTime', 'dateTime'], ['lastActiveTime', 'dateTime'], ['locale', 'string'], ['messageLocale', 'string'], ['extensionSession', 'boolean'], ['ipAddress', 'string'], ['userAgent', 'string'], ['callCount', 'long']]);
def('RetrieveResult', undefined, [['token', 'string'], ['objects', 'ObjectContent[]']]);
def('ObjectContent', undefined, [['obj', 'moref'], ['propSet', 'DynamicProperty[]'], ['missingSet', 'MissingProperty[]']]);
def('DynamicProperty', undefined, [['name', 'string'], ['val', 'anyType']]);
def('MissingProperty', undefined, [['path', 'string'], ['fault', 'LocalizedMethodFault']]);
def('LocalizedMethodFault', undefined, [['fault', 'MethodFault'], ['localizedMessage', 'string']]);
def('MethodFault', undefined, [['faultCause', 'LocalizedMethodFault'], ['faultMessage', 'LocalizableMessage[]']]);
def('LocalizableMessage', undefined, [['key', 'string'], ['arg', 'KeyAnyValue[]'], ['message', 'string']]);
def('KeyAnyValue', undefined, [['key', 'string'], ['value', 'anyType']]);
def('UpdateSet', undefined, [['version', 'string'], ['filterSet', 'PropertyFilterUpdate[]'], ['truncated', 'boolean']]);
def('PropertyFilterUpdate', undefined, [['filter', 'moref'], ['objectSet', 'ObjectUpdate[]'], ['missingSet', 'MissingObject[]']]);
def('MissingObject', undefined, [['obj', 'moref'], ['fault', 'LocalizedMethodFault']]);
def('ObjectUpdate', undefined, [['kind', 'string'], ['obj', 'moref'], ['changeSet', 'PropertyChange[]'], ['missingSet', 'MissingProperty[]']]);
def('PropertyChange', undefined, [['name', 'string'], ['op', 'string'], ['val', 'anyType']]);
def('PropertyFilterSpec', undefined, [['propSet', 'PropertySpec[]'], ['objectSet', 'ObjectSpec[]'], ['reportMissingObjectsInResults', 'boolean']]);
def('PropertySpec', undefined, [['type', 'string'], ['all', 'boolean'], ['pathSet', 'string[]']]);
def('ObjectSpec', undefined, [['obj', 'moref'], ['skip', 'boolean'], ['selectSet', 'SelectionSpec[]']]);
def('SelectionSpec', undefined, [['name', 'string']]);
def('TraversalSpec', 'SelectionSpec', [['type', 'string'], ['path', 'string'], ['skip', 'boolean'], ['selectSet', 'SelectionSpec[]']]);
def('RetrieveOptions', undefined, [['maxObjects', 'int']]);
def('WaitOptions', undefined, [['maxWaitSeconds', 'int'], ['maxObjectUpdates', 'int']]);
def('TaskInfo', undefined, [['key', 'string'], ['task', 'moref'], ['description', 'LocalizableMessage'], ['name', 'string'], ['descriptionId', 'string'], ['entity', 'moref'], ['entityName', 'string'], ['locked', 'moref[]'], ['state', 'string'], ['cancelled', 'boolean'], ['cancelable', 'boolean'], ['error', 'LocalizedMethodFault'], ['result', 'anyType'], ['progress', 'int'], ['reason', 'TaskReason'], ['queueTime', 'dateTime'], ['startTime', 'dateTime'], ['completeTime', 'dateTime'], ['eventChainId', 'int'], ['changeTag', 'string'], ['parentTaskKey', 'string'], ['rootTaskKey', 'string'], ['activationId', 'string']]);
def('TaskReason', undefined, []);

// --- faults whose fields we read
def('NoPermission', 'MethodFault', [['object', 'moref'], ['privilegeId', 'string']]);
def('NotAuthenticated', 'NoPermission', []);
def('ManagedObjectNotFound', 'MethodFault', [['obj', 'moref']]);
def('InvalidDeviceSpec', 'MethodFault', [['property', 'string'], ['deviceIndex', 'int']]);
def('DuplicateName', 'MethodFault', [['name', 'string'], ['object', 'moref']]);
def('ResourceInUse', 'MethodFault', [['type', 'string'], ['name', 'string']]);
def('InvalidArgument', 'MethodFault', [['invalidProperty', 'string']]);

// --- storage devices
def('HostDevice', undefined, [['deviceName', 'string'], ['deviceType', 'string']]);
def('ScsiLun', 'HostDevice', [['key', 'string'], ['uuid', 'string'], ['descriptor', 'ScsiLunDescriptor[]'], ['canonicalName', 'string'], ['displayName', 'string'], ['lunType', 'string'], ['vendor', 'string'], ['model', 'string'], ['revision', 'string'], ['scsiLevel', 'int'], ['serialNumber', 'string'], ['durableName', 'ScsiLunDurableName'], ['alternateName', 'ScsiLunDurableName[]'], ['standardInquiry', 'byte[]'], ['queueDepth', 'int'], ['operationalState', 'string[]'], ['capabilities', 'ScsiLunCapabilities'], ['vStorageSupport', 'string'], ['protocolEndpoint', 'boolean'], ['perenniallyReserved', 'boolean'], ['clusteredVmdkSupported', 'boolean']]);
def('ScsiLunDescriptor', undefined, [['quality', 'string'], ['id', 'string']]);
def('ScsiLunDurableName', undefined, [['namespace', 'string'], ['namespaceId', 'byte'], ['data', 'byte[]']]);
def('ScsiLunCapabilities', undefined, [['updateDisplayNameSupported', 'boolean']]);
def('HostScsiDisk', 'ScsiLun', [['capacity', 'HostDiskDimensionsLba'], ['devicePath', 'string'], ['ssd', 'boolean'], ['localDisk', 'boolean'], ['physicalLocation', 'string[]'], ['emulatedDIXDIFEnabled', 'boolean'], ['vsanDiskInfo', 'VsanHostVsanDiskInfo'], ['scsiDiskType', 'string']]);
def('VsanHostVsanDiskInfo', undefined, [['vsanUuid', 'string'], ['fsVersion', 'string']]);
def('HostDiskDimensionsLba', undefined, [['blockSize', 'int'], ['block', 'long']]);
def('HostDiskDimensionsChs', undefined, [['cylinder', 'long'], ['head', 'int'], ['sector', 'int']]);
def('HostStorageDeviceInfo', undefined, [['hostBusAdapter', 'HostHostBusAdapter[]'], ['scsiLun', 'ScsiLun[]'], ['scsiTopology', 'anyType'], ['nvmeTopology', 'anyType'], ['multipathInfo', 'anyType'], ['plugStoreTopology', 'anyType'], ['softwareInternetScsiEnabled', 'boolean']]);
def('HostHostBusAdapter', undefined, [['key', 'string'], ['device', 'string'], ['bus', 'int'], ['status', 'string'], ['model', 'string'], ['driver', 'string'], ['pci', 'string'], ['storageProtocol', 'string']]);
def('HostFileSystemVolumeInfo', undefined, [['volumeTypeList', 'string[]'], ['mountInfo', 'HostFileSystemMountInfo[]']]);
def('HostFileSystemMountInfo', undefined, [['mountInfo', 'HostMountInfo'], ['volume', 'HostFileSystemVolume'], ['vStorageSupport', 'string']]);
def('HostMountInfo', undefined, [['path', 'string'], ['accessMode', 'string'], ['mounted', 'boolean'], ['accessible', 'boolean'], ['inaccessibleReason', 'string'], ['mountFailedReason', 'string']]);

// --- VMFS creation (round-tripped: QueryVmfsDatastoreCreateOptions → CreateVmfsDatastore)
def('VmfsDatastoreOption', undefined, [['info', 'VmfsDatastoreBaseOption'], ['spec', 'VmfsDatastoreSpec']]);
def('VmfsDatastoreBaseOption', undefined, [['layout', 'HostDiskPartitionLayout'], ['partitionFormatChange', 'boolean']]);
def('VmfsDatastoreSingleExtentOption', 'VmfsDatastoreBaseOption', [['vmfsExtent', 'HostDiskPartitionBlockRange']]);
def('VmfsDatastoreAllExtentOption', 'VmfsDatastoreSingleExtentOption', []);
def('VmfsDatastoreMultipleExtentOption', 'VmfsDatastoreBaseOption', [['vmfsExtent', 'HostDiskPartitionBlockRange[]']]);
def('HostDiskPartitionLayout', undefined, [['total', 'HostDiskDimensionsLba'], ['partition', 'HostDiskPartitionBlockRange[]']]);
def('HostDiskPartitionBlockRange', undefined, [['partition', 'int'], ['type', 'string'], ['start', 'HostDiskDimensionsLba'], ['end', 'HostDiskDimensionsLba']]);
def('VmfsDatastoreSpec', undefined, [['diskUuid', 'string']]);
def('VmfsDatastoreCreateSpec', 'VmfsDatastoreSpec', [['partition', 'HostDiskPartitionSpec'], ['vmfs', 'HostVmfsSpec'], ['extent', 'HostScsiDiskPartition[]']]);
def('VmfsDatastoreExtendSpec', 'VmfsDatastoreSpec', [['partition', 'HostDiskPartitionSpec'], ['extent', 'HostScsiDiskPartition[]']]);
def('HostDiskPartitionSpec', undefined, [['partitionFormat', 'string'], ['chs', 'HostDiskDimensionsChs'], ['totalSectors', 'long'], ['partition', 'HostDiskPartitionAttributes[]']]);
def('HostDiskPartitionAttributes', undefined, [['partition', 'int'], ['startSector', 'long'], ['endSector', 'long'], ['type', 'string'], ['guid', 'string'], ['logical', 'boolean'], ['attributes', 'byte'], ['partitionAlignment', 'long']]);
def('HostVmfsSpec', undefined, [['extent', 'HostScsiDiskPartition'], ['blockSizeMb', 'int'], ['majorVersion', 'int'], ['volumeName', 'string'], ['blockSize', 'int'], ['unmapGranularity', 'int'], ['unmapPriority', 'string'], ['unmapBandwidthSpec', 'VmfsUnmapBandwidthSpec']]);
def('VmfsConfigOption', undefined, [['blockSizeOption', 'int'], ['unmapGranularityOption', 'int[]'], ['unmapBandwidthFixedValue', 'LongOption'], ['unmapBandwidthDynamicMin', 'LongOption'], ['unmapBandwidthDynamicMax', 'LongOption'], ['unmapBandwidthIncrement', 'long'], ['unmapBandwidthUpperLimit', 'long']]);
def('LongOption', undefined, [['valueIsReadonly', 'boolean'], ['min', 'long'], ['max', 'long'], ['defaultValue', 'long']]);
def('VmfsUnmapBandwidthSpec', undefined, [['policy', 'string'], ['fixedValue', 'int'], ['dynamicMin', 'int'], ['dynamicMax', 'int']]);
def('HostScsiDiskPartition', undefined, [['diskName', 'string'], ['partition', 'int']]);
def('HostNasVolumeSpec', undefined, [['remoteHost', 'string'], ['remotePath', 'string'], ['localPath', 'string'], ['accessMode', 'string'], ['type', 'string'], ['userName', 'string'], ['password', 'string'], ['remoteHostNames', 'string[]'], ['securityType', 'string']]);

// --- datastores
def('DatastoreInfo', undefined, [['name', 'string'], ['url', 'string'], ['freeSpace', 'long'], ['maxFileSize', 'long'], ['maxVirtualDiskCapacity', 'long'], ['maxMemoryFileSize', 'long'], ['timestamp', 'dateTime'], ['containerId', 'string'], ['aliasOf', 'string']]);
def('VmfsDatastoreInfo', 'DatastoreInfo', [['maxPhysicalRDMFileSize', 'long'], ['maxVirtualRDMFileSize', 'long'], ['vmfs', 'HostVmfsVolume']]);
def('NasDatastoreInfo', 'DatastoreInfo', [['nas', 'HostNasVolume']]);
def('LocalDatastoreInfo', 'DatastoreInfo', [['path', 'string']]);
def('VsanDatastoreInfo', 'DatastoreInfo', [['membershipUuid', 'string'], ['accessGenNo', 'int']]);
def('HostFileSystemVolume', undefined, [['type', 'string'], ['name', 'string'], ['capacity', 'long']]);
def('HostVmfsVolume', 'HostFileSystemVolume', [['blockSizeMb', 'int'], ['blockSize', 'int'], ['unmapGranularity', 'int'], ['unmapPriority', 'string'], ['unmapBandwidthSpec', 'VmfsUnmapBandwidthSpec'], ['maxBlocks', 'int'], ['majorVersion', 'int'], ['version', 'string'], ['uuid', 'string'], ['extent', 'HostScsiDiskPartition[]'], ['vmfsUpgradable', 'boolean'], ['forceMountedInfo', 'anyType'], ['ssd', 'boolean'], ['local', 'boolean'], ['scsiDiskType', 'string']]);
def('HostNasVolume', 'HostFileSystemVolume', [['remoteHost', 'string'], ['remotePath', 'string'], ['userName', 'string'], ['remoteHostNames', 'string[]'], ['securityType', 'string'], ['protocolEndpoint', 'boolean']]);
def('HostLocalFileSystemVolume', 'HostFileSystemVolume', [['device', 'string']]);
def('DatastoreSummary', undefined, [['datastore', 'moref'], ['name', 'string'], ['url', 'string'], ['capacity', 'long'], ['freeSpace', 'long'], ['uncommitted', 'long'], ['accessible', 'boolean'], ['multipleHostAccess', 'boolean'], ['type', 'string'], ['maintenanceMode', 'string']]);
def('HostDatastoreBrowserSearchSpec', undefined, [['query', 'FileQuery[]'], ['details', 'FileQueryFlags'], ['searchCaseInsensitive', 'boolean'], ['matchPattern', 'string[]'], ['sortFoldersFirst', 'boolean']]);
def('FileQuery', undefined, []);
def('FileQueryFlags', undefined, [['fileType', 'boolean'], ['fileSize', 'boolean'], ['modification', 'boolean'], ['fileOwner', 'boolean']]);
def('HostDatastoreBrowserSearchResults', undefined, [['datastore', 'moref'], ['folderPath', 'string'], ['file', 'FileInfo[]']]);
def('FileInfo', undefined, [['path', 'string'], ['friendlyName', 'string'], ['fileSize', 'long'], ['modification', 'dateTime'], ['owner', 'string']]);
def('DatastoreHostMount', undefined, [['key', 'moref'], ['mountInfo', 'HostMountInfo']]);

// --- virtual machines and devices
def('VirtualMachineSnapshotInfo', undefined, [['currentSnapshot', 'moref'], ['rootSnapshotList', 'VirtualMachineSnapshotTree[]']]);
def('VirtualMachineSnapshotTree', undefined, [['snapshot', 'moref'], ['vm', 'moref'], ['name', 'string'], ['description', 'string'], ['id', 'int'], ['createTime', 'dateTime'], ['state', 'string'], ['quiesced', 'boolean'], ['backupManifest', 'string'], ['childSnapshotList', 'VirtualMachineSnapshotTree[]'], ['replaySupported', 'boolean']]);
def('VirtualMachineConfigSpec', undefined, [['deviceChange', 'VirtualDeviceConfigSpec[]']]);
def('VirtualDeviceConfigSpec', undefined, [['operation', 'string'], ['fileOperation', 'string'], ['device', 'VirtualDevice'], ['profile', 'anyType[]'], ['backing', 'anyType']]);
def('Description', undefined, [['label', 'string'], ['summary', 'string']]);
def('VirtualDevice', undefined, [['key', 'int'], ['deviceInfo', 'Description'], ['backing', 'VirtualDeviceBackingInfo'], ['connectable', 'VirtualDeviceConnectInfo'], ['slotInfo', 'anyType'], ['controllerKey', 'int'], ['unitNumber', 'int'], ['numaNode', 'int'], ['deviceGroupInfo', 'anyType']]);
def('VirtualDeviceConnectInfo', undefined, [['migrateConnect', 'string'], ['startConnected', 'boolean'], ['allowGuestControl', 'boolean'], ['connected', 'boolean'], ['status', 'string']]);
def('VirtualDisk', 'VirtualDevice', [['capacityInKB', 'long'], ['capacityInBytes', 'long'], ['shares', 'anyType'], ['storageIOAllocation', 'anyType'], ['diskObjectId', 'string'], ['vFlashCacheConfigInfo', 'anyType'], ['iofilter', 'string[]'], ['vDiskId', 'anyType'], ['vDiskVersion', 'int'], ['nativeUnmanagedLinkedClone', 'boolean'], ['independentFilters', 'anyType[]'], ['guestReadOnly', 'boolean']]);
def('VirtualController', 'VirtualDevice', [['busNumber', 'int'], ['device', 'int[]']]);
def('VirtualSCSIController', 'VirtualController', [['hotAddRemove', 'boolean'], ['sharedBus', 'string'], ['scsiCtlrUnitNumber', 'int']]);
for (const n of ['ParaVirtualSCSIController', 'VirtualLsiLogicController', 'VirtualLsiLogicSASController', 'VirtualBusLogicController']) def(n, 'VirtualSCSIController', []);
def('VirtualIDEController', 'VirtualController', []);
def('VirtualSATAController', 'VirtualController', []);
def('VirtualAHCIController', 'VirtualSATAController', []);
def('VirtualNVMEController', 'VirtualController', []);
def('VirtualDeviceBackingInfo', undefined, []);
def('VirtualDeviceFileBackingInfo', 'VirtualDeviceBackingInfo', [['fileName', 'string'], ['datastore', 'moref'], ['backingObjectId', 'string']]);
def('VirtualDiskFlatVer2BackingInfo', 'VirtualDeviceFileBackingInfo', [['diskMode', 'string'], ['split', 'boolean'], ['writeThrough', 'boolean'], ['thinProvisioned', 'boolean'], ['eagerlyScrub', 'boolean'], ['uuid', 'string'], ['contentId', 'string'], ['changeId', 'string'], ['parent', 'VirtualDiskFlatVer2BackingInfo'], ['deltaDiskFormat', 'string'], ['digestEnabled', 'boolean'], ['deltaGrainSize', 'int'], ['deltaDiskFormatVariant', 'string'], ['sharing', 'string'], ['keyId', 'anyType']]);
def('VirtualDiskRawDiskMappingVer1BackingInfo', 'VirtualDeviceFileBackingInfo', [['lunUuid', 'string'], ['deviceName', 'string'], ['compatibilityMode', 'string'], ['diskMode', 'string'], ['uuid', 'string'], ['contentId', 'string'], ['changeId', 'string'], ['parent', 'VirtualDiskRawDiskMappingVer1BackingInfo'], ['deltaDiskFormat', 'string'], ['deltaGrainSize', 'int'], ['sharing', 'string']]);
def('VirtualHardware', undefined, [['numCPU', 'int'], ['numCoresPerSocket', 'int'], ['autoCoresPerSocket', 'boolean'], ['memoryMB', 'int'], ['virtualICH7MPresent', 'boolean'], ['virtualSMCPresent', 'boolean'], ['device', 'VirtualDevice[]'], ['motherboardLayout', 'string'], ['simultaneousThreads', 'int']]);
def('VirtualMachineConfigInfo', undefined, [['changeVersion', 'string'], ['modified', 'dateTime'], ['name', 'string'], ['guestFullName', 'string'], ['version', 'string'], ['uuid', 'string'], ['hardware', 'VirtualHardware'], ['extraConfig', 'OptionValue[]']]);
def('OptionValue', undefined, [['key', 'string'], ['value', 'anyType']]);
def('VirtualMachineRuntimeInfo', undefined, [['device', 'anyType[]'], ['host', 'moref'], ['connectionState', 'string'], ['powerState', 'string']]);
def('GuestInfo', undefined, [['toolsStatus', 'string'], ['toolsVersionStatus', 'string'], ['toolsVersionStatus2', 'string'], ['toolsRunningStatus', 'string'], ['toolsVersion', 'string'], ['toolsInstallType', 'string'], ['guestId', 'string'], ['guestFamily', 'string'], ['guestFullName', 'string'], ['hostName', 'string'], ['ipAddress', 'string'], ['net', 'GuestNicInfo[]']]);
def('GuestNicInfo', undefined, [['network', 'string'], ['ipAddress', 'string[]'], ['macAddress', 'string'], ['connected', 'boolean'], ['deviceConfigId', 'int']]);
def('HostConfigManager', undefined, [['cpuScheduler', 'moref'], ['datastoreSystem', 'moref'], ['memoryManager', 'moref'], ['storageSystem', 'moref']]);
def('HostConfigInfo', undefined, [['host', 'moref'], ['product', 'anyType'], ['storageDevice', 'HostStorageDeviceInfo'], ['fileSystemVolume', 'HostFileSystemVolumeInfo']]);

// --- performance manager (real-time counters of the disk under test: perf.ts)
def('ElementDescription', 'Description', [['key', 'string']]);
def('PerfCounterInfo', undefined, [['key', 'int'], ['nameInfo', 'ElementDescription'], ['groupInfo', 'ElementDescription'], ['unitInfo', 'ElementDescription'], ['rollupType', 'string'], ['statsType', 'string'], ['level', 'int'], ['perDeviceLevel', 'int'], ['associatedCounterId', 'int[]']]);
def('PerfProviderSummary', undefined, [['entity', 'moref'], ['currentSupported', 'boolean'], ['summarySupported', 'boolean'], ['refreshRate', 'int']]);
def('PerfMetricId', undefined, [['counterId', 'int'], ['instance', 'string']]);
def('PerfQuerySpec', undefined, [['entity', 'moref'], ['startTime', 'dateTime'], ['endTime', 'dateTime'], ['maxSample', 'int'], ['metricId', 'PerfMetricId[]'], ['intervalId', 'int'], ['format', 'string']]);
def('PerfEntityMetricBase', undefined, [['entity', 'moref']]);
def('PerfEntityMetric', 'PerfEntityMetricBase', [['sampleInfo', 'PerfSampleInfo[]'], ['value', 'PerfMetricSeries[]']]);
def('PerfSampleInfo', undefined, [['timestamp', 'dateTime'], ['interval', 'int']]);
def('PerfMetricSeries', undefined, [['id', 'PerfMetricId']]);
def('PerfMetricIntSeries', 'PerfMetricSeries', [['value', 'long[]']]);

// --- guest operations (pyvmomi docs/vim/vm/guest/ProcessManager.rst, FileManager.rst; govmomi 0.24 vim25/types/types.go)
def('GuestAuthentication', undefined, [['interactiveSession', 'boolean']]);
def('NamePasswordAuthentication', 'GuestAuthentication', [['username', 'string'], ['password', 'string']]);
def('GuestProgramSpec', undefined, [['programPath', 'string'], ['arguments', 'string'], ['workingDirectory', 'string'], ['envVariables', 'string[]']]);
def('GuestProcessInfo', undefined, [['name', 'string'], ['pid', 'long'], ['owner', 'string'], ['cmdLine', 'string'], ['startTime', 'dateTime'], ['endTime', 'dateTime'], ['exitCode', 'int']]);
def('GuestFileAttributes', undefined, [['modificationTime', 'dateTime'], ['accessTime', 'dateTime'], ['symlinkTarget', 'string']]);
def('GuestPosixFileAttributes', 'GuestFileAttributes', [['ownerId', 'int'], ['groupId', 'int'], ['permissions', 'long']]);
def('GuestWindowsFileAttributes', 'GuestFileAttributes', [['hidden', 'boolean'], ['readOnly', 'boolean'], ['createTime', 'dateTime']]);
def('FileTransferInformation', undefined, [['attributes', 'GuestFileAttributes'], ['size', 'long'], ['url', 'string']]);
def('GuestOperationsFault', 'MethodFault', []);
def('GuestProcessNotFound', 'GuestOperationsFault', [['pid', 'long']]);

const PRIMS = new Set<string>(['string', 'int', 'long', 'short', 'byte', 'float', 'double', 'boolean', 'dateTime', 'moref', 'anyType', 'base64Binary']);

export function isKnownType(name: string): boolean {
  return name in T;
}

/** Resolve the field type of `field` on `type`, walking the base chain. */
function fieldType(type: string | undefined, field: string): FieldType | undefined {
  let t = type;
  while (t) {
    const d = T[t];
    if (!d) return undefined;
    const f = d.fields.find(([n]) => n === field);
    if (f) return f[1];
    t = d.base;
  }
  return undefined;
}

/** All fields of `type` in WSDL order (base type's fields first). */
export function fieldOrder(type: string): string[] {
  const d = T[type];
  if (!d) return [];
  return [...(d.base ? fieldOrder(d.base) : []), ...d.fields.map(([n]) => n)];
}

// ---------------------------------------------------------------- decoding

/** A decoded data object: its vim type name in `_type` when known (from xsi:type or the schema). */
export type DataObject = { _type?: string } & Record<string, unknown>;

function convertPrim(kind: string, text: string): unknown {
  switch (kind) {
    case 'int':
    case 'long':
    case 'short':
    case 'byte':
    case 'float':
    case 'double': {
      const n = Number(text.trim());
      return Number.isNaN(n) ? text : n;
    }
    case 'boolean':
      return text.trim() === 'true' || text.trim() === '1';
    default:
      return text;
  }
}

function decodeArrayOf(node: XmlNode, itemType: string): unknown[] {
  const kind = itemType === 'ManagedObjectReference' ? 'moref' : lowerPrim(itemType);
  return node.children.map((c) => decodeNode(c, kind));
}

function lowerPrim(t: string): string {
  const l = t.charAt(0).toLowerCase() + t.slice(1);
  return PRIMS.has(l) ? l : t;
}

/**
 * Decode one element. `declared` is the schema type of the slot (primitive kind or type name);
 * xsi:type on the element wins, since slots like `device`, `backing`, `val` are polymorphic.
 */
export function decodeNode(node: XmlNode, declared?: string): unknown {
  let type = declared;
  if (node.xsiType) {
    const { ns, local } = node.xsiType;
    if (ns === NS_XSD) return convertPrim(local, node.text);
    if (local === 'ManagedObjectReference') type = 'moref';
    else if (local.startsWith('ArrayOf')) return decodeArrayOf(node, local.slice(7));
    else type = local;
  }
  if (type === 'moref' || (type === undefined && node.children.length === 0 && node.attrs.type !== undefined)) {
    const ref: MoRef = { type: node.attrs.type ?? '', value: node.text };
    return ref;
  }
  if (type !== undefined && PRIMS.has(type) && type !== 'anyType') return convertPrim(type, node.text);
  if (node.children.length === 0 && (type === undefined || type === 'anyType' || !isKnownType(type))) {
    return node.text;
  }
  const obj: DataObject = {};
  if (type !== undefined && type !== 'anyType') obj._type = type;
  // a subtype this schema does not list (e.g. VirtualCdrom in a VirtualDevice slot) has at least
  // the declared type's fields: those are decoded as that type says (key, controllerKey and
  // unitNumber numbers, not strings), the rest as text
  const st = type !== undefined && isKnownType(type) ? type : declared !== undefined && isKnownType(declared) ? declared : undefined;
  const multi = new Set<string>();
  for (const c of node.children) {
    const ft = st ? fieldType(st, c.name) : undefined;
    const isArray = ft?.endsWith('[]') ?? false;
    const v = decodeNode(c, ft ? ft.replace(/\[\]$/, '') : undefined);
    const prev = obj[c.name];
    if (isArray) {
      if (Array.isArray(prev)) prev.push(v);
      else obj[c.name] = [v];
    } else if (prev === undefined) {
      obj[c.name] = v;
    } else if (multi.has(c.name)) {
      (prev as unknown[]).push(v);
    } else {
      // An element the schema does not know that repeats: keep every occurrence.
      obj[c.name] = [prev, v];
      multi.add(c.name);
    }
  }
  // Known array fields that were absent stay absent; readers use `arr()`.
  return obj;
}

/** Decode the `returnval` children of a `<MethodResponse>`; one value, a list, or undefined. */
export function decodeReturn(resp: XmlNode, declared: string): unknown {
  const vals = resp.children.filter((c) => c.name === 'returnval');
  if (declared.endsWith('[]')) return vals.map((v) => decodeNode(v, declared.slice(0, -2)));
  const first = vals[0];
  return first === undefined ? undefined : decodeNode(first, declared);
}

export function arr<X>(v: X[] | X | undefined | null): X[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

// ---------------------------------------------------------------- encoding

/**
 * Reorder a data object (built by us or decoded from a response) into WSDL element order so it
 * can be sent back; fields unknown to the schema of a known type are dropped (never guessed).
 */
export function toSoap(value: unknown, declared?: string): SoapValue {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map((v) => toSoap(v, declared));
  if (typeof value !== 'object' || value instanceof Date || isMoRef(value)) return value as SoapValue;
  const o = value as DataObject;
  const type = o._type ?? declared;
  const out: Record<string, SoapValue> = {};
  if (o._type) out._type = o._type;
  if (type && isKnownType(type)) {
    for (const f of fieldOrder(type)) {
      if (o[f] === undefined) continue;
      const ft = fieldType(type, f)!.replace(/\[\]$/, '');
      out[f] = toSoap(o[f], PRIMS.has(ft) ? undefined : ft);
    }
  } else {
    for (const [k, v] of Object.entries(o)) if (k !== '_type') out[k] = toSoap(v);
  }
  return out;
}

// ---------------------------------------------------------------- typed views

export interface ServiceContent {
  rootFolder: MoRef;
  propertyCollector: MoRef;
  viewManager?: MoRef;
  about: { fullName: string; version: string; build: string; apiType: string; apiVersion: string; instanceUuid?: string };
  sessionManager?: MoRef;
  authorizationManager?: MoRef;
  searchIndex: MoRef;
  fileManager?: MoRef;
  virtualDiskManager?: MoRef;
  taskManager?: MoRef;
  perfManager?: MoRef;
  /** vSphere 5.0+: processManager, fileManager (GuestOperationsManager) */
  guestOperationsManager?: MoRef;
}

/** A process in the guest as ListProcessesInGuest reports it; endTime/exitCode once it ended (kept ~5 min). */
export interface GuestProcessInfo {
  name: string;
  pid: number;
  owner: string;
  cmdLine: string;
  startTime: string;
  endTime?: string;
  exitCode?: number;
}

export interface FileTransferInformation {
  attributes?: DataObject;
  size: number;
  url: string;
}

export interface UserSession {
  key: string;
  userName: string;
  fullName?: string;
  loginTime?: string;
}

export interface ObjectContent {
  obj: MoRef;
  propSet?: Array<{ name: string; val: unknown }>;
  missingSet?: Array<{ path: string; fault: LocalizedMethodFault }>;
}

export interface RetrieveResult {
  token?: string;
  objects?: ObjectContent[];
}

export interface LocalizedMethodFault {
  fault: DataObject;
  localizedMessage?: string;
}

export interface UpdateSet {
  version: string;
  filterSet?: Array<{ filter: MoRef; objectSet?: Array<{ kind: string; obj: MoRef; changeSet?: Array<{ name: string; op: string; val?: unknown }> }> }>;
  truncated?: boolean;
}

export interface TaskInfo {
  key: string;
  task: MoRef;
  name?: string;
  descriptionId?: string;
  entity?: MoRef;
  entityName?: string;
  state: 'queued' | 'running' | 'success' | 'error';
  error?: LocalizedMethodFault;
  result?: unknown;
  progress?: number;
}

export interface HostScsiDisk {
  _type?: string;
  deviceName: string;
  deviceType?: string;
  key: string;
  uuid: string;
  canonicalName: string;
  displayName?: string;
  lunType: string;
  vendor?: string;
  model?: string;
  capacity?: { blockSize: number; block: number };
  devicePath: string;
  ssd?: boolean;
  localDisk?: boolean;
}

export interface HostScsiDiskPartition {
  diskName: string;
  partition: number;
}

export interface HostVmfsSpec {
  _type?: string;
  extent: HostScsiDiskPartition;
  blockSizeMb?: number;
  majorVersion: number;
  volumeName: string;
  blockSize?: number;
  unmapGranularity?: number;
  unmapPriority?: string;
}

export interface VmfsDatastoreCreateSpec {
  _type?: string;
  diskUuid: string;
  partition: DataObject;
  vmfs: HostVmfsSpec;
  extent?: HostScsiDiskPartition[];
}

/** VmfsConfigOption (since vSphere API 6.5): one per block size (KB) the host creates VMFS6 with. */
export interface VmfsConfigOption {
  blockSizeOption: number;
  unmapGranularityOption?: number[];
}

export interface VmfsDatastoreOption {
  info: DataObject;
  spec: DataObject;
}

export interface HostVmfsVolume {
  _type?: string;
  type: string;
  name: string;
  capacity: number;
  blockSizeMb?: number;
  blockSize?: number;
  majorVersion: number;
  version?: string;
  uuid?: string;
  extent?: HostScsiDiskPartition[];
}

export interface DatastoreInfo {
  _type?: string;
  name: string;
  url: string;
  freeSpace?: number;
  /** the largest file the datastore stores (VMFS3: by block size) */
  maxFileSize?: number;
  vmfs?: HostVmfsVolume;
  nas?: { remoteHost: string; remotePath: string; type: string };
}

export interface DatastoreSummary {
  datastore?: MoRef;
  name: string;
  url?: string;
  capacity: number;
  freeSpace: number;
  accessible: boolean;
  type: string;
}

export interface VirtualDevice {
  _type?: string;
  key: number;
  deviceInfo?: { label: string; summary: string };
  backing?: DataObject;
  controllerKey?: number;
  unitNumber?: number;
  busNumber?: number;
  scsiCtlrUnitNumber?: number;
  capacityInKB?: number;
  capacityInBytes?: number;
}

export interface PerfCounterInfo {
  key: number;
  nameInfo: { key: string };
  groupInfo: { key: string };
  unitInfo: { key: string };
  rollupType: string;
  statsType: string;
  level?: number;
}

export interface PerfMetricId {
  counterId: number;
  instance: string;
}

export interface PerfEntityMetric {
  _type?: string;
  entity: MoRef;
  sampleInfo?: Array<{ timestamp: string; interval: number }>;
  value?: Array<{ _type?: string; id: PerfMetricId; value?: number[] }>;
}
