// Every recorded real vCenter (8.0.3, 6.0.0) response parses, and parses to the same typed values when
// rewritten the way vcsim writes XML (xsi bound to the prefix `XMLSchema-instance`, per element).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromSoapFault } from '../../../../src/providers/vsphere/fault.ts';
import { parseSoapResponse, parseXml, SoapFault } from '../../../../src/providers/vsphere/soap.ts';
import { arr, decodeReturn, type DataObject } from '../../../../src/providers/vsphere/types.ts';

const ROOT = join(import.meta.dirname, '../../../fixtures/vcenter-soap');
const index = JSON.parse(readFileSync(join(ROOT, 'index.json'), 'utf8')) as Record<string, Array<{ file: string; method: string; status: number }>>;

function load(session: string, file: string): string {
  return readFileSync(join(ROOT, session, `${file}.response.xml`), 'utf8');
}

/** What vcsim does: no envelope-level xsi, `XMLSchema-instance:type` declared on each element. */
function vcsimStyle(xml: string): string {
  return xml
    .replace(/\s*xmlns:xsi="http:\/\/www\.w3\.org\/2001\/XMLSchema-instance"/g, '')
    .replace(/xsi:type="/g, 'xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance" XMLSchema-instance:type="');
}

function decode(method: string, status: number, xml: string): unknown {
  try {
    return decodeReturn(parseSoapResponse(method, status, xml), 'anyType');
  } catch (err) {
    if (err instanceof SoapFault) return { fault: err.faultName, detail: fromSoapFault(err, 'vc').details.detail };
    throw err;
  }
}

const calls = Object.entries(index).flatMap(([session, list]) => list.map((c) => ({ session, ...c })));

describe('recorded vCenter 8.0.3 / 6.0.0 responses', () => {
  it('the index lists every response file in the fixture tree', () => {
    const onDisk = Object.keys(index).flatMap((s) =>
      readdirSync(join(ROOT, s))
        .filter((f) => f.endsWith('.response.xml'))
        .map((f) => `${s}/${f}`),
    );
    expect(onDisk.length).toBe(calls.length);
    expect(calls.length).toBeGreaterThan(100);
  });

  for (const c of calls) {
    it(`${c.session}/${c.file} parses identically in vCenter and vcsim namespace styles`, () => {
      const xml = load(c.session, c.file);
      if (c.method.startsWith('GET-')) {
        const root = parseXml(xml);
        expect(root.name).toBe('namespaces');
        expect(parseXml(vcsimStyle(xml))).toEqual(root);
        return;
      }
      const real = decode(c.method, c.status, xml);
      const sim = decode(c.method, c.status, vcsimStyle(xml));
      expect(sim).toEqual(real);
      if (c.status === 500) expect(real).toHaveProperty('fault');
    });
  }
});

describe('typed values from real traffic', () => {
  it('Login returns a UserSession with typed fields', () => {
    const s = decodeReturn(parseSoapResponse('Login', 200, load('vcenter-8.0.3/basic_connection', '01-Login')), 'UserSession') as DataObject;
    expect(s).toMatchObject({ _type: 'UserSession', userName: 'my_user', callCount: 0, extensionSession: false });
  });

  it('a bad password is an InvalidLogin fault with the server message', () => {
    let err: unknown;
    try {
      parseSoapResponse('Login', 500, load('vcenter-6.0.0/basic_connection_bad_password', '01-Login'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SoapFault);
    const vf = fromSoapFault(err as SoapFault, 'vc.example');
    expect(vf.faultName).toBe('InvalidLogin');
    expect(vf.message).toBe('Login on vc.example: InvalidLogin: Cannot complete login due to an incorrect user name or password.');
  });

  it('ServiceContent singletons are MoRefs', () => {
    const sc = decodeReturn(parseSoapResponse('RetrieveServiceContent', 200, load('vcenter-8.0.3/basic_connection', '00-RetrieveServiceContent')), 'ServiceContent') as DataObject;
    expect(sc.rootFolder).toEqual({ type: 'Folder', value: 'group-d1' });
    expect(sc.propertyCollector).toEqual({ type: 'PropertyCollector', value: 'propertyCollector' });
    expect((sc.about as DataObject).apiType).toBe('VirtualCenter');
  });

  it('CreateContainerView returns the view MoRef; a view list is an array of MoRefs', () => {
    const v = decodeReturn(parseSoapResponse('CreateContainerView', 200, load('vcenter-8.0.3/basic_container_view', '04-CreateContainerView')), 'moref');
    expect(v).toMatchObject({ type: 'ContainerView' });
    const list = decode('Fetch', 200, load('vcenter-8.0.3/basic_container_view', '05-Fetch'));
    expect(list).toEqual([{ type: 'Datacenter', value: 'datacenter-3' }]);
  });

  it('HostConfigInfo: SCSI disks and a VMFS 6 volume with 1 MB blocks', () => {
    const cfg = decode('Fetch', 200, load('vcenter-8.0.3/test_json_host_explode', '30-Fetch')) as DataObject;
    expect(cfg._type).toBe('HostConfigInfo');
    const luns = arr((cfg.storageDevice as DataObject).scsiLun as DataObject[]);
    expect(luns.length).toBeGreaterThan(0);
    const nvme = luns.find((l) => l.canonicalName === 'eui.bf39aeebe2d354a3000c29631c7fc125')!;
    expect(nvme).toMatchObject({ _type: 'HostScsiDisk', lunType: 'disk', ssd: true, localDisk: true, devicePath: '/vmfs/devices/disks/eui.bf39aeebe2d354a3000c29631c7fc125' });
    expect((nvme.capacity as DataObject).block).toBe(94371840);
    expect(Array.isArray(nvme.descriptor)).toBe(true);
    const mounts = arr((cfg.fileSystemVolume as DataObject).mountInfo as DataObject[]);
    const vmfs = mounts.map((m) => m.volume as DataObject).find((v) => v._type === 'HostVmfsVolume' && v.name === 'OSDATA-6578236b-36208281-d646-062517c9e1a8')!;
    expect(vmfs).toMatchObject({ blockSizeMb: 1, blockSize: 1024, majorVersion: 6, version: '6.82', capacity: 8321499136 });
    expect(vmfs.extent).toEqual([{ _type: 'HostScsiDiskPartition', diskName: 'mpx.vmhba0:C0:T0:L0', partition: 7 }]);
  });

  it('VirtualMachineConfigInfo: the disk backing flags are booleans', () => {
    const cfg = decode('Fetch', 200, load('vcenter-8.0.3/test_json_vm_explode_default', '20-Fetch')) as DataObject;
    const devices = arr((cfg.hardware as DataObject).device as DataObject[]);
    const disk = devices.find((d) => d._type === 'VirtualDisk')!;
    expect(disk).toMatchObject({ key: 2000, controllerKey: 1000, unitNumber: 0, capacityInKB: 2097152, capacityInBytes: 2147483648 });
    expect(disk.backing).toMatchObject({ _type: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: true, eagerlyScrub: false, diskMode: 'persistent', datastore: { type: 'Datastore', value: 'datastore-17' } });
  });

  it('DatastoreInfo is resolved to its subtype', () => {
    const info = decode('Fetch', 200, load('vcenter-8.0.3/test_json_datastore_explode', '19-Fetch')) as DataObject;
    expect(info).toMatchObject({ _type: 'VsanDatastoreInfo', name: 'vsanDatastore', freeSpace: 362348271376, accessGenNo: 13 });
  });
});
