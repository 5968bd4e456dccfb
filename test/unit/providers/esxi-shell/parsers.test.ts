import { describe, expect, it } from 'vitest';
import { parseDeviceList, parseFilesystemList, parseVmfsExtentList } from '../../../../src/providers/esxi-shell/esxcli.ts';
import { parseGetptbl, parseUsableSectors, vmfsPartitionLayout, VMFS_GPT_GUID } from '../../../../src/providers/esxi-shell/partedutil.ts';
import { getDiskUuidArgv, parseCreateVmfs, parseDiskUuid, parseQueryFs } from '../../../../src/providers/esxi-shell/vmkfstools.ts';
import { parseDiskDevices, parseGetAllVms } from '../../../../src/providers/esxi-shell/vimcmd.ts';
import { ParseError } from '../../../../src/errors.ts';

const DEVICES = `naa.600508b1001c7e1f1f6d5c3a1b2e4d01
   Display Name: Local HP Disk (naa.600508b1001c7e1f1f6d5c3a1b2e4d01)
   Has Settable Display Name: true
   Size: 1953514
   Device Type: Direct-Access   
   Devfs Path: /vmfs/devices/disks/naa.600508b1001c7e1f1f6d5c3a1b2e4d01
   Vendor: HP      
   Is Local: true
   Is SSD: true
   Is Offline: false
   Attached Filters: 
   Is Boot Device: true

mpx.vmhba32:C0:T0:L0:
   Display Name: Local USB CD-ROM (mpx.vmhba32:C0:T0:L0)
   Size: 0
   Device Type: CD-ROM
   Is Boot Device: false
`;

describe('esxcli parsers', () => {
  it('reads device records, trims trailing spaces and drops a trailing colon on the id', () => {
    const d = parseDeviceList(DEVICES);
    expect(d.map((x) => x.name)).toEqual(['naa.600508b1001c7e1f1f6d5c3a1b2e4d01', 'mpx.vmhba32:C0:T0:L0']);
    expect(d[0]).toMatchObject({ sizeMb: 1953514, deviceType: 'Direct-Access', vendor: 'HP', isSsd: true, isBootDevice: true, isOffline: false });
    expect(d[0]!.fields['Attached Filters']).toBe('');
    expect(d[1]!.deviceType).toBe('CD-ROM');
  });

  it('rejects a key line outside a record with the line number', () => {
    expect(() => parseDeviceList('   Size: 1\n')).toThrow(/line 1/);
  });

  it('splits fixed-width tables by the dash row, so names with spaces survive', () => {
    const text = [
      'Volume Name      VMFS UUID                            Extent Number  Device Name                           Partition',
      '---------------  -----------------------------------  -------------  ------------------------------------  ---------',
      'my data store 1  5f69774e-f1031e44-7bdb-ac1f6bc4b812              0  naa.600062b2049d040026fc1e4b2f305682          3',
    ].join('\n');
    expect(parseVmfsExtentList(text)).toEqual([{ volumeName: 'my data store 1', vmfsUuid: '5f69774e-f1031e44-7bdb-ac1f6bc4b812', extentNumber: 0, deviceName: 'naa.600062b2049d040026fc1e4b2f305682', partition: 3 }]);
  });

  it('reads the filesystem list with sizes in bytes', () => {
    const text = [
      'Mount Point                                        Volume Name  UUID                                 Mounted  Type    Size          Free',
      '-------------------------------------------------  -----------  -----------------------------------  -------  ------  ------------  ------------',
      '/vmfs/volumes/5f69774e-f1031e44-7bdb-ac1f6bc4b812  datastore1   5f69774e-f1031e44-7bdb-ac1f6bc4b812     true  VMFS-6  106300440576   99857989632',
    ].join('\n');
    expect(parseFilesystemList(text)[0]).toMatchObject({ volumeName: 'datastore1', mounted: true, type: 'VMFS-6', sizeBytes: 106300440576, freeBytes: 99857989632 });
  });

  it('reports a missing dash row as ParseError', () => {
    expect(() => parseVmfsExtentList('Volume Name\nfoo\n')).toThrow(ParseError);
  });
});

describe('partedUtil parsers', () => {
  it('reads a gpt table with the type-name column', () => {
    const t = parseGetptbl(`gpt\n1305 255 63 20971520\n1 2048 20971486 ${VMFS_GPT_GUID} vmfs 0\n`);
    expect(t).toMatchObject({ label: 'gpt', cylinders: 1305, heads: 255, sectorsPerTrack: 63, totalSectors: 20971520 });
    expect(t.partitions).toEqual([{ number: 1, startSector: 2048, endSector: 20971486, type: VMFS_GPT_GUID, attributes: 0 }]);
  });

  it('reads an msdos table without type names and a blank disk', () => {
    expect(parseGetptbl('msdos\n2610 255 63 41943040\n1 128 41943039 251 0\n').partitions[0]).toMatchObject({ startSector: 128, type: '251' });
    expect(parseGetptbl('unknown\n2610 255 63 41943040\n')).toMatchObject({ label: 'unknown', partitions: [] });
  });

  it('rejects an unknown label and a malformed geometry line', () => {
    expect(() => parseGetptbl('Error: Could not stat device\n')).toThrow(/line 1/);
    expect(() => parseGetptbl('gpt\n1 2 3\n')).toThrow(/line 2/);
  });

  it('reads usable sectors and derives the VMFS layout per version', () => {
    const u = parseUsableSectors('34 2343043038\n');
    expect(u).toEqual({ first: 34, last: 2343043038 });
    expect(vmfsPartitionLayout('vmfs6', u)).toEqual({ label: 'gpt', partition: { number: 1, startSector: 2048, endSector: 2343043038, type: VMFS_GPT_GUID, attributes: 0 } });
    expect(vmfsPartitionLayout('vmfs3', { first: 1, last: 41943039 })).toEqual({ label: 'msdos', partition: { number: 1, startSector: 128, endSector: 41943039, type: '251', attributes: 0 } });
  });
});

describe('vmkfstools and vim-cmd parsers', () => {
  it('reads the new volume uuid and the block size from -P', () => {
    expect(parseCreateVmfs('Creating vmfs3 file system on "naa.x:1" with blockSize 8388608 and volume label "t1".\nSuccessfully created new volume: 67e26f28-ca124794-af57-8dda57a66e8c\n')).toBe('67e26f28-ca124794-af57-8dda57a66e8c');
    expect(() => parseCreateVmfs('Error: Device or resource busy\n')).toThrow(ParseError);
    const q = parseQueryFs('VMFS-3.60 (Raw Major Version: 13) file system spanning 1 partitions.\nFile system label (if any): t1\nMode: public\nCapacity 21466447872 (2559 file blocks * 8388608), 21466447872 (2559 blocks) avail, max supported file size 69201586814976\nUUID: 67e26f28-ca124794-af57-8dda57a66e8c\nPartitions spanned (on "lvm"):\n\tnaa.6000c2900000000000000000000000a1:1\nIs Native Snapshot Capable: NO\n');
    expect(q).toEqual({ version: 'VMFS-3.60', label: 't1', capacityBytes: 21466447872, blockSizeBytes: 8388608, uuid: '67e26f28-ca124794-af57-8dda57a66e8c', partitions: ['naa.6000c2900000000000000000000000a1:1'] });
  });

  it('anchors getallvms rows on the [datastore] token so names with spaces parse', () => {
    const rows = parseGetAllVms('Vmid   Name    File   Guest OS   Version   Annotation\n12     my bench vm   [ssd ds] my bench vm/my bench vm.vmx   windows9_64Guest   vmx-14\n');
    expect(rows).toEqual([{ vmid: '12', name: 'my bench vm', datastore: 'ssd ds', vmxPath: 'my bench vm/my bench vm.vmx' }]);
  });

  it('reads disk backings from getdevices', () => {
    const text = '(vim.vm.device.VirtualDisk) {\n fileName = "[t1] x.vmdk",\n controllerKey = 1000,\n unitNumber = 1,\n},';
    expect(parseDiskDevices(text)).toEqual([{ fileName: '[t1] x.vmdk', controllerKey: 1000, unitNumber: 1 }]);
  });
});

describe('vmkfstools -J getuuid', () => {
  it('reads the one line ESXi prints, as the WWN the guest sees (dashes and spaces gone, lower case)', () => {
    expect(getDiskUuidArgv('/vmfs/volumes/ds/vm/vm.vmdk')).toEqual(['vmkfstools', '-J', 'getuuid', '/vmfs/volumes/ds/vm/vm.vmdk']);
    // as printed on ESXi 7.0u3 (kjlyon/pmem_content, HowToMapVMWareVShphereESXiPMemFromHostToGuestVM.md)
    expect(parseDiskUuid('UUID is 60 00 C2 98 42 c7 54 f8-02 c2 d4 9b 20 6b 08 0c\n')).toBe('6000c29842c754f802c2d49b206b080c');
  });

  it.each([
    ['nothing', ''],
    ['a VMFS volume uuid', 'UUID is 5f69774e-f1031e44-7bdb-ac1f6bc4b812'],
    ['the API form', 'UUID is 6000C298-42c7-54f8-02c2-d49b206b080c'],
    ['15 bytes', 'UUID is 60 00 C2 98 42 c7 54 f8-02 c2 d4 9b 20 6b 08'],
    ['an error on stdout', 'Failed to open disk: The system cannot find the file specified (25).'],
    ['two lines', 'UUID is 60 00 C2 98 42 c7 54 f8-02 c2 d4 9b 20 6b 08 0c\nUUID is 60 00 C2 98 42 c7 54 f8-02 c2 d4 9b 20 6b 08 0d'],
  ])('anything else is a ParseError, never a guessed identity: %s', (_what, text) => {
    expect(() => parseDiskUuid(text)).toThrow(ParseError);
  });
});
