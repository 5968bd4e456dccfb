// Request bodies: WSDL element order, xsi:type on polymorphic slots, escaping; unit placement.
import { describe, expect, it } from 'vitest';
import { nextFreeUnit, placeDisk, flatBacking } from '../../../../src/providers/vsphere/disks.ts';
import { buildEnvelope, parseXml } from '../../../../src/providers/vsphere/soap.ts';
import { decodeNode, toSoap, type VirtualDevice } from '../../../../src/providers/vsphere/types.ts';

function bodyOf(xml: string): string {
  return /<soapenv:Body>(.*)<\/soapenv:Body>/.exec(xml)![1]!;
}

describe('buildEnvelope', () => {
  it('Login: _this first, parameters in order, text escaped', () => {
    const xml = buildEnvelope('Login', { type: 'SessionManager', value: 'SessionManager' }, [
      ['userName', 'a<b>&"c'],
      ['password', "p'w"],
      ['locale', undefined],
    ]);
    expect(bodyOf(xml)).toBe('<Login xmlns="urn:vim25"><_this type="SessionManager">SessionManager</_this><userName>a&lt;b&gt;&amp;&quot;c</userName><password>p&apos;w</password></Login>');
    // and it round-trips through our own parser
    const login = parseXml(xml).children[0]!.children[0]!;
    expect(login.children.map((c) => [c.name, c.text])).toEqual([
      ['_this', 'SessionManager'],
      ['userName', 'a<b>&"c'],
      ['password', "p'w"],
    ]);
  });

  it('a VMFS create spec decoded from a response is re-sent in WSDL order whatever its key order', () => {
    const scrambled = {
      _type: 'VmfsDatastoreCreateSpec',
      extent: [{ partition: 1, diskName: 'naa.1' }],
      vmfs: { volumeName: 'ds1', blockSizeMb: 8, majorVersion: 3, extent: { partition: 1, diskName: 'naa.1' } },
      partition: { partition: [{ type: 'vmfs', endSector: 99, startSector: 128, partition: 1 }], totalSectors: 100, partitionFormat: 'mbr' },
      diskUuid: 'u1',
      unknownField: 'dropped',
    };
    const body = bodyOf(buildEnvelope('CreateVmfsDatastore', { type: 'HostDatastoreSystem', value: 'dss-1' }, [['spec', toSoap(scrambled, 'VmfsDatastoreCreateSpec')]]));
    expect(body).toBe(
      '<CreateVmfsDatastore xmlns="urn:vim25"><_this type="HostDatastoreSystem">dss-1</_this><spec xsi:type="VmfsDatastoreCreateSpec">' +
        '<diskUuid>u1</diskUuid>' +
        '<partition><partitionFormat>mbr</partitionFormat><totalSectors>100</totalSectors><partition><partition>1</partition><startSector>128</startSector><endSector>99</endSector><type>vmfs</type></partition></partition>' +
        '<vmfs><extent><diskName>naa.1</diskName><partition>1</partition></extent><blockSizeMb>8</blockSizeMb><majorVersion>3</majorVersion><volumeName>ds1</volumeName></vmfs>' +
        '<extent><diskName>naa.1</diskName><partition>1</partition></extent>' +
        '</spec></CreateVmfsDatastore>',
    );
  });

  it('a new disk: VirtualDisk fields and backing in WSDL order, with xsi:type', () => {
    const device = { _type: 'VirtualDisk', capacityInBytes: 2048, capacityInKB: 2, unitNumber: 1, controllerKey: 1000, backing: flatBacking('[ds] d.vmdk', 'eagerzeroedthick', 'persistent'), key: -1 };
    const spec = toSoap({ deviceChange: [{ device, fileOperation: 'create', operation: 'add' }] }, 'VirtualMachineConfigSpec');
    expect(bodyOf(buildEnvelope('ReconfigVM_Task', { type: 'VirtualMachine', value: 'vm-1' }, [['spec', spec]]))).toBe(
      '<ReconfigVM_Task xmlns="urn:vim25"><_this type="VirtualMachine">vm-1</_this><spec><deviceChange><operation>add</operation><fileOperation>create</fileOperation>' +
        '<device xsi:type="VirtualDisk"><key>-1</key><backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[ds] d.vmdk</fileName><diskMode>persistent</diskMode><thinProvisioned>false</thinProvisioned><eagerlyScrub>true</eagerlyScrub></backing>' +
        '<controllerKey>1000</controllerKey><unitNumber>1</unitNumber><capacityInKB>2</capacityInKB><capacityInBytes>2048</capacityInBytes></device></deviceChange></spec></ReconfigVM_Task>',
    );
  });

  it('entities are decoded; DOCTYPE entities are never expanded', () => {
    const n = parseXml('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY boom "BOOM">]><a>&boom;&#65;&#x42;&amp;</a>');
    expect(n.text).toBe('&boom;AB&');
  });

  it('primitive xsi types convert by namespace, not by prefix', () => {
    const n = parseXml('<val xmlns:q="http://www.w3.org/2001/XMLSchema-instance" xmlns:s="http://www.w3.org/2001/XMLSchema" q:type="s:long">42</val>');
    expect(decodeNode(n)).toBe(42);
    const fake = parseXml('<val xmlns:xsi="urn:not-xsi" xsi:type="xsd:long">42</val>');
    expect(decodeNode(fake)).toBe('42');
  });
});

describe('a device type the schema does not list', () => {
  it('is decoded with its declared base type’s fields: a CD-ROM’s controllerKey and unitNumber are numbers, so placement sees its unit taken', () => {
    const xml =
      '<val xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ArrayOfVirtualDevice">' +
      '<VirtualDevice xsi:type="ParaVirtualSCSIController"><key>202</key><controllerKey>100</controllerKey><unitNumber>3</unitNumber><busNumber>0</busNumber></VirtualDevice>' +
      '<VirtualDevice xsi:type="VirtualCdrom"><key>203</key><backing xsi:type="VirtualCdromRemotePassthroughBackingInfo"><deviceName></deviceName><exclusive>false</exclusive></backing><controllerKey>202</controllerKey><unitNumber>0</unitNumber></VirtualDevice>' +
      '</val>';
    const devices = decodeNode(parseXml(xml)) as VirtualDevice[];
    expect(devices[1]).toMatchObject({ _type: 'VirtualCdrom', key: 203, controllerKey: 202, unitNumber: 0 });
    // the backing's own fields are not the base's: kept as text
    expect(devices[1]!.backing).toMatchObject({ _type: 'VirtualCdromRemotePassthroughBackingInfo', exclusive: 'false' });
    expect(nextFreeUnit(devices, devices[0]!)).toBe(1);
  });
});

describe('unit placement', () => {
  const ctrl: VirtualDevice = { _type: 'ParaVirtualSCSIController', key: 1000, busNumber: 0, scsiCtlrUnitNumber: 7 };
  const disk = (unit: number): VirtualDevice => ({ _type: 'VirtualDisk', key: 2000 + unit, controllerKey: 1000, unitNumber: unit });

  it('takes the lowest free unit and skips 7 (the controller)', () => {
    expect(nextFreeUnit([ctrl, disk(0)], ctrl)).toBe(1);
    expect(nextFreeUnit([ctrl, ...[0, 1, 2, 3, 4, 5, 6].map(disk)], ctrl)).toBe(8);
    expect(nextFreeUnit([ctrl, ...[0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15].map(disk)], ctrl)).toBeUndefined();
  });

  it('refuses a taken or reserved unit and an unknown controller', () => {
    expect(placeDisk([ctrl, disk(0)], 'vm-1', undefined, 3)).toEqual({ controllerKey: 1000, unitNumber: 3 });
    expect(() => placeDisk([ctrl, disk(0)], 'vm-1', 1000, 0)).toThrow('unit 0 on controller 1000 of VM vm-1 is in use');
    expect(() => placeDisk([ctrl], 'vm-1', 1000, 7)).toThrow('unit 7 on controller 1000 of VM vm-1 is reserved for the controller');
    expect(() => placeDisk([ctrl], 'vm-1', 42)).toThrow('VM vm-1 has no controller with key 42');
    expect(() => placeDisk([], 'vm-1')).toThrow('VM vm-1 has no SCSI controller to attach a disk to');
  });
});
