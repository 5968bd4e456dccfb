// The lab simulator, checked through an independent client (pyVmomi from Debian) and raw SOAP:
// what it adds to govmomi 0.24's vcsim must look like a real vCenter/ESXi to anyone who asks.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startVcsim, stopVcsimPid, vcsimControl, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { probe, probeOne } from '../helpers/pyvmomi-probe.ts';
import { heldCalls, heldTasks, taskAwaited } from '../helpers/vcsim-log.ts';
import { hold, waitFor } from '../helpers/wait.ts';

const GiB = 1024 ** 3;

interface Lun {
  canonicalName: string;
  uuid: string;
  devicePath: string | null;
  lunType: string;
  capacityBytes: number | null;
  vendor: string;
  model: string;
  type: string;
}
interface DiskInfo {
  key: number;
  unitNumber: number;
  backingType: string;
  fileName: string;
  thinProvisioned?: boolean;
  eagerlyScrub?: boolean;
  compatibilityMode?: string;
  deviceName?: string;
  lunUuid?: string;
  diskMode?: string;
  capacityInKB: number;
}

/** Minimal raw SOAP, to see exactly what goes over the wire (status, fault, dropped socket). */
async function soap(
  vc: VcsimHandle,
  body: string,
  cookie?: string,
): Promise<{ status: number; text: string; cookie?: string }> {
  const ca = await fs.readFile(vc.certFile);
  const u = new URL(vc.url);
  const envelope =
    '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>' +
    body +
    '</soapenv:Body></soapenv:Envelope>';
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        ca,
        agent: false,
        headers: {
          'content-type': 'text/xml; charset="utf-8"',
          soapaction: 'urn:vim25/6.5',
          ...(cookie ? { cookie } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          const set = res.headers['set-cookie']?.[0]?.split(';')[0];
          resolve({ status: res.statusCode ?? 0, text, ...(set ? { cookie: set } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(envelope);
  });
}

const login = (vc: VcsimHandle, sm: string) =>
  `<Login xmlns="urn:vim25"><_this type="SessionManager">${sm}</_this><userName>${vc.username}</userName><password>${vc.password}</password></Login>`;
const currentTime = `<CurrentTime xmlns="urn:vim25"><_this type="ServiceInstance">ServiceInstance</_this></CurrentTime>`;

describe('vcsim harness (vCenter model)', () => {
  let vc: VcsimHandle;
  let luns: Record<string, Lun[]> = {};

  beforeAll(async () => {
    vc = await startVcsim({ username: 'administrator@vsphere.local', password: 'lab-Secret1' });
    const hosts = ['DC0_H0', 'DC0_C0_H0', 'DC0_C0_H1', 'DC0_C0_H2'];
    const res = await probe(vc, hosts.map((host) => ({ op: 'luns', host })));
    luns = Object.fromEntries(hosts.map((h, i) => [h, (res[i]?.available ?? []) as Lun[]]));
  });
  afterAll(async () => {
    await vc?.stop();
  });

  const disk = (host: string, gib: number): Lun => {
    const d = luns[host]?.find((l) => l.capacityBytes === gib * GiB);
    if (!d) throw new Error(`no ${gib} GiB LUN on ${host}`);
    return d;
  };

  it('prints a ready line whose thumbprint is the SHA-256 of the served certificate', async () => {
    expect(vc.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/sdk$/);
    const cert = new X509Certificate(await fs.readFile(vc.certFile));
    expect(vc.thumbprint).toBe(cert.fingerprint256);
    expect(vc.apiType).toBe('VirtualCenter');
    expect(() => process.kill(vc.pid, 0)).not.toThrow();
    const [about] = await probe(vc, [{ op: 'about' }]);
    expect(about).toMatchObject({ ok: true, apiType: 'VirtualCenter' });
  });

  it('refuses wrong credentials with InvalidLogin', async () => {
    const [r] = await probe(vc, [{ op: 'about' }], { username: vc.username, password: 'wrong' });
    expect(r).toMatchObject({ ok: false, fault: 'InvalidLogin' });
  });

  it('gives every host four naa.* LUNs in config.storageDevice and the storage system', async () => {
    const r = await probeOne(vc, { op: 'luns', host: 'DC0_C0_H2' });
    const naa = (list: unknown) => (list as Lun[]).filter((l) => l.canonicalName.startsWith('naa.'));
    const config = naa(r.config);
    expect(config.map((l) => l.capacityBytes)).toEqual([8 * GiB, 16 * GiB, 32 * GiB, 64 * GiB]);
    for (const l of config) {
      expect(l.canonicalName).toMatch(/^naa\.6000c29[0-9a-f]{25}$/);
      expect(l.devicePath).toBe(`/vmfs/devices/disks/${l.canonicalName}`);
      expect(l).toMatchObject({ type: 'HostScsiDisk', lunType: 'disk', vendor: 'VMware', model: 'Virtual disk' });
    }
    expect(naa(r.storageSystem)).toEqual(config);
    expect(naa(r.available).map((l) => l.canonicalName)).toEqual(config.map((l) => l.canonicalName));
    // LUNs are per host, not shared
    expect(luns.DC0_H0?.[0]?.canonicalName).not.toBe(config[0]?.canonicalName);
  });

  it('creates VMFS3 datastores at 1/2/4/8 MB blocks that read back as such, and removes them (as ESXi 5.5)', async () => {
    await vc.control.version('5.5'); // no later release creates VMFS3 (version.go)
    onTestFinished(async () => void (await vc.control.version('8.0')));
    const host = 'DC0_C0_H0';
    const sizes = [1, 2, 4, 8];
    const ops = sizes.flatMap((mb, i) => [
      { op: 'create-vmfs', host, disk: disk(host, [8, 16, 32, 64][i] ?? 8).canonicalName, name: `v3-${mb}mb`, major: 3, blockSizeMb: mb },
      { op: 'datastore', name: `v3-${mb}mb` },
    ]);
    const res = await probe(vc, [...ops, { op: 'luns', host }]);
    sizes.forEach((mb, i) => {
      const created = res[2 * i];
      const info = res[2 * i + 1];
      expect(created).toMatchObject({ ok: true, partitionFormat: 'mbr', startSector: 128 });
      expect(info).toMatchObject({
        ok: true,
        type: 'VMFS',
        infoType: 'VmfsDatastoreInfo',
        majorVersion: 3,
        blockSizeMb: mb,
        blockSize: mb * 1024,
        volumeName: `v3-${mb}mb`,
        extent: [{ diskName: disk(host, [8, 16, 32, 64][i] ?? 8).canonicalName, partition: 1 }],
      });
      const mounts = info?.mounts as { name: string; type: string; path: string }[];
      expect(mounts.find((m) => m.name === `v3-${mb}mb`)).toMatchObject({ type: 'VMFS', path: expect.stringMatching(/^\/vmfs\/volumes\//) });
    });
    expect(res.at(-1)?.available).toEqual([]);

    const removed = await probe(vc, [
      ...sizes.map((mb) => ({ op: 'remove-datastore', host, name: `v3-${mb}mb` })),
      { op: 'datastores' },
      { op: 'luns', host },
    ]);
    expect(removed.slice(0, 4).every((r) => r.ok)).toBe(true);
    expect(removed[4]?.names).toEqual(['LocalDS_0']);
    expect((removed[5]?.available as Lun[]).length).toBe(4);
    const [mounts] = await probe(vc, [{ op: 'mounts', host }]);
    expect(mounts).toMatchObject({ hostDatastores: ['LocalDS_0'], mounts: ['OTHER:LocalDS_0'] });
  });

  it('mounts an NFS export by datastore name on several hosts and unmounts it per host', async () => {
    const nas = { op: 'create-nas', server: 'nfs.lab.local', path: '/export/bench', name: 'nfs-bench' };
    const res = await probe(vc, [
      { ...nas, host: 'DC0_C0_H0' },
      { ...nas, host: 'DC0_C0_H1' },
      { op: 'mounts', host: 'DC0_C0_H0' },
      { op: 'remove-datastore', host: 'DC0_C0_H0', name: 'nfs-bench' },
      { op: 'mounts', host: 'DC0_C0_H0' },
      { op: 'mounts', host: 'DC0_C0_H1' },
      { op: 'remove-datastore', host: 'DC0_C0_H1', name: 'nfs-bench' },
      { op: 'datastores' },
    ]);
    expect(res[0]).toMatchObject({ ok: true, type: 'NFS', infoType: 'NasDatastoreInfo', remoteHost: 'nfs.lab.local', remotePath: '/export/bench' });
    expect(res[1]).toMatchObject({ ok: true, datastore: res[0]?.datastore, hosts: ['DC0_C0_H0', 'DC0_C0_H1'] });
    expect(res[2]?.mounts).toContain('NFS:nfs-bench');
    expect(res[3]).toMatchObject({ ok: true });
    expect(res[4]).toMatchObject({ hostDatastores: ['LocalDS_0'] });
    expect(res[5]?.hostDatastores).toEqual(['LocalDS_0', 'nfs-bench']);
    expect(res[6]).toMatchObject({ ok: true });
    expect(res[7]?.names).toEqual(['LocalDS_0']);
  });

  it('creates VMFS5 at 1 MB and VMFS6 at 1 MB / 64 KB on GPT at sector 2048', async () => {
    const host = 'DC0_C0_H1';
    const res = await probe(vc, [
      { op: 'create-vmfs', host, disk: disk(host, 8).canonicalName, name: 'v5', major: 5 },
      { op: 'datastore', name: 'v5' },
      { op: 'create-vmfs', host, disk: disk(host, 16).canonicalName, name: 'v6-64k', major: 6, blockSize: 64, unmapGranularity: 64 },
      { op: 'datastore', name: 'v6-64k' },
      { op: 'create-vmfs', host, disk: disk(host, 32).canonicalName, name: 'v6-1m', major: 6 },
      { op: 'datastore', name: 'v6-1m' },
    ]);
    expect(res[0]).toMatchObject({ ok: true, partitionFormat: 'gpt', startSector: 2048 });
    expect(res[1]).toMatchObject({ majorVersion: 5, blockSizeMb: 1, blockSize: 1024, version: '5.81' });
    expect(res[3]).toMatchObject({ majorVersion: 6, blockSize: 64 });
    expect(res[5]).toMatchObject({ majorVersion: 6, blockSize: 1024, blockSizeMb: 1 });
    const cleanup = await probe(vc, ['v5', 'v6-64k', 'v6-1m'].map((name) => ({ op: 'remove-datastore', host, name })));
    expect(cleanup.every((r) => r.ok)).toBe(true);
  });

  it('refuses combinations a host cannot format, and disks already in use', async () => {
    const host = 'DC0_C0_H1';
    const d = disk(host, 64).canonicalName;
    const res = await probe(vc, [
      { op: 'create-vmfs', host, disk: d, name: 'bad5', major: 5, blockSizeMb: 8 },
      { op: 'create-vmfs', host, disk: d, name: 'bad6', major: 6, blockSize: 2048 },
      { op: 'create-vmfs', host, disk: d, name: 'bad3', major: 3, blockSizeMb: 16 },
      { op: 'create-vmfs', host, disk: d, name: 'bad4', major: 4 },
      { op: 'create-vmfs', host, disk: d, name: 'used', major: 5 },
      { op: 'create-vmfs', host, disk: d, name: 'used-again', major: 5 },
      { op: 'remove-datastore', host, name: 'used' },
    ]);
    expect(res[0]).toMatchObject({ ok: false, fault: 'InvalidArgument', message: expect.stringContaining('spec.vmfs.blockSizeMb') });
    expect(res[1]).toMatchObject({ ok: false, fault: 'InvalidArgument', message: expect.stringContaining('spec.vmfs.blockSize') });
    expect(res[2]).toMatchObject({ ok: false, fault: 'InvalidArgument' });
    expect(res[3]).toMatchObject({ ok: false, fault: 'InvalidArgument', message: expect.stringContaining('vmfsMajorVersion') });
    expect(res[4]).toMatchObject({ ok: true });
    expect(res[5]).toMatchObject({ ok: false, fault: 'HostConfigFault', message: expect.stringContaining(d) });
    expect(res[6]).toMatchObject({ ok: true });
  });

  it('refuses to remove a datastore a VM has disks on (ResourceInUse)', async () => {
    const host = 'DC0_H0';
    const res = await probe(vc, [
      { op: 'create-vmfs', host, disk: disk(host, 64).canonicalName, name: 'busy', major: 6 },
      { op: 'add-disk', vm: 'DC0_H0_VM1', unit: 6, fileName: '[busy] data.vmdk', thin: true },
      { op: 'remove-datastore', host, name: 'busy' },
    ]);
    expect(res[0]).toMatchObject({ ok: true });
    expect(res[1]).toMatchObject({ ok: true, state: 'success' });
    expect(res[2]).toMatchObject({ ok: false, fault: 'ResourceInUse' });
  });

  it('keeps RDM backings (physical and virtual) visible and later reconfigurations working', async () => {
    const vm = 'DC0_H0_VM0';
    const phys = disk('DC0_H0', 8);
    const virt = disk('DC0_H0', 16);
    const res = await probe(vc, [
      { op: 'add-rdm', vm, unit: 3, deviceName: phys.devicePath, mode: 'physicalMode' },
      { op: 'add-rdm', vm, unit: 5, deviceName: virt.devicePath, lunUuid: virt.uuid, mode: 'virtualMode' },
      { op: 'add-disk', vm, unit: 4, thin: false, eager: true },
      { op: 'add-disk', vm, unit: 8, thin: true, eager: false },
      { op: 'vm-disks', vm },
      { op: 'add-rdm', vm, unit: 9, deviceName: '/vmfs/devices/disks/naa.6000c29000000000000000000000dead', mode: 'physicalMode' },
      { op: 'add-rdm', vm, unit: 10, deviceName: phys.devicePath, mode: 'sharedMode' },
    ]);
    expect(res.slice(0, 4).map((r) => r.state)).toEqual(['success', 'success', 'success', 'success']);
    const disks = res[4]?.disks as DiskInfo[];
    const at = (unit: number) => disks.find((d) => d.unitNumber === unit);
    expect(at(3)).toMatchObject({
      backingType: 'VirtualDiskRawDiskMappingVer1BackingInfo',
      compatibilityMode: 'physicalMode',
      deviceName: phys.devicePath,
      lunUuid: phys.uuid,
      capacityInKB: 8 * 1024 * 1024,
    });
    expect(at(5)).toMatchObject({ compatibilityMode: 'virtualMode', deviceName: virt.devicePath, diskMode: 'persistent' });
    expect(at(4)).toMatchObject({ backingType: 'VirtualDiskFlatVer2BackingInfo', thinProvisioned: false, eagerlyScrub: true });
    expect(at(8)).toMatchObject({ thinProvisioned: true, eagerlyScrub: false });
    expect(res[5]).toMatchObject({ ok: false, fault: 'InvalidDeviceBacking' });
    expect(res[6]).toMatchObject({ ok: false, fault: 'InvalidDeviceBacking' });

    // Removing an RDM goes through the same code path that panicked in stock vcsim.
    const key = at(3)?.key;
    const after = await probe(vc, [{ op: 'remove-disk', vm, key }, { op: 'vm-disks', vm }]);
    expect(after[0]).toMatchObject({ ok: true, state: 'success' });
    const left = after[1]?.disks as DiskInfo[];
    expect(left.find((d) => d.unitNumber === 3)).toBeUndefined();
    expect(left.find((d) => d.unitNumber === 5)).toMatchObject({ compatibilityMode: 'virtualMode' });
  });

  it('reports the provisioning a disk was created with when it is attached later', async () => {
    const res = await probe(vc, [
      { op: 'create-vdisk', datacenter: 'DC0', name: '[LocalDS_0] ez.vmdk', diskType: 'eagerZeroedThick' },
      // the client claims thin; the disk's descriptor says eager-zeroed thick
      { op: 'add-disk', vm: 'DC0_H0_VM1', unit: 9, fileName: '[LocalDS_0] ez.vmdk', create: false, thin: true },
      { op: 'vm-disks', vm: 'DC0_H0_VM1' },
    ]);
    expect(res[0]).toMatchObject({ ok: true, state: 'success' });
    expect(res[1]).toMatchObject({ ok: true, state: 'success' });
    const d = (res[2]?.disks as DiskInfo[]).find((x) => x.unitNumber === 9);
    expect(d).toMatchObject({ fileName: '[LocalDS_0] ez.vmdk', thinProvisioned: false, eagerlyScrub: true });
  });

  it('pages RetrievePropertiesEx with maxObjects and ContinueRetrievePropertiesEx', async () => {
    const [r] = await probe(vc, [{ op: 'page', max: 1 }]);
    const pages = r?.pages as { token: string | null; names: string[] }[];
    expect(pages.length).toBe(4);
    expect(pages[0]?.token).toMatch(/^[0-9a-f]+$/);
    expect(pages.at(-1)?.token).toBeNull();
    expect(pages.every((p) => p.names.length === 1)).toBe(true);
    expect(pages.flatMap((p) => p.names).sort()).toEqual(r?.all);

    const [c] = await probe(vc, [{ op: 'page', max: 3, cancel: true }]);
    expect((c?.pages as unknown[])[1]).toEqual({ afterCancel: 'InvalidArgument' });
  });

  it('injects SOAP faults and task errors for the next N calls, and counts calls', async () => {
    await vc.control.reset();
    await vc.control.fault({ method: 'CreateVmfsDatastore', fault: 'HostConfigFault', message: 'injected: LUN offline' });
    await vc.control.fault({ method: 'ReconfigVM_Task', fault: 'InsufficientResourcesFault', asTask: true, message: 'no room' });
    const host = 'DC0_C0_H2';
    const res = await probe(vc, [
      { op: 'create-vmfs', host, disk: disk(host, 8).canonicalName, name: 'flaky', major: 5 },
      { op: 'create-vmfs', host, disk: disk(host, 8).canonicalName, name: 'flaky', major: 5 },
      { op: 'add-disk', vm: 'DC0_H0_VM1', unit: 11 },
      { op: 'add-disk', vm: 'DC0_H0_VM1', unit: 11 },
      { op: 'remove-datastore', host, name: 'flaky' },
    ]);
    expect(res[0]).toMatchObject({ ok: false, fault: 'HostConfigFault', message: 'injected: LUN offline' });
    expect(res[1]).toMatchObject({ ok: true });
    expect(res[2]).toMatchObject({ ok: false, fault: 'InsufficientResourcesFault' });
    expect(res[3]).toMatchObject({ ok: true, state: 'success' });
    const calls = await vc.control.calls();
    expect(calls.CreateVmfsDatastore).toBe(2);
    expect(calls.ReconfigVM_Task).toBe(2);
    expect(calls.RemoveDatastore).toBe(1);
    await vc.control.reset();
    expect(await vc.control.calls()).toEqual({});
  });

  it('rejects bad control requests with a clear message', async () => {
    await expect(vc.control.drop({ method: 'Login', when: 'sometimes' as 'before' })).rejects.toThrow(/"when" must be "before" or "after"/);
    await expect(vc.control.fault({ method: 'Login', fault: 'NoSuchFault' })).rejects.toThrow(/unknown vim25 type "NoSuchFault"/);
    await expect(vc.control.slowTask('Login', 10)).rejects.toThrow(/not a \*_Task method/);
  });

  it('expires sessions on request and requires a session for property retrieval', async () => {
    const sm = 'SessionManager';
    const l = await soap(vc, login(vc, sm));
    expect(l.status).toBe(200);
    expect(l.cookie).toMatch(/^vmware_soap_session=/);
    expect((await soap(vc, currentTime, l.cookie)).status).toBe(200);

    expect(await vc.control.expireSessions()).toBeGreaterThanOrEqual(1);
    const denied = await soap(vc, currentTime, l.cookie);
    expect(denied.status).toBe(500);
    expect(denied.text).toContain('NotAuthenticatedFault');
    expect(denied.text).toContain('xsi:type="NotAuthenticated"');

    const anon = await soap(
      vc,
      `<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">propertyCollector</_this><specSet><propSet><type>Folder</type><pathSet>name</pathSet></propSet><objectSet><obj type="Folder">group-d1</obj></objectSet></specSet><options/></RetrievePropertiesEx>`,
    );
    expect(anon.status).toBe(500);
    expect(anon.text).toContain('NotAuthenticated');

    const again = await soap(vc, login(vc, sm), l.cookie);
    expect(again.status).toBe(200);
    expect((await soap(vc, currentTime, again.cookie)).status).toBe(200);
  });

  it('drops the connection before or after executing a call', async () => {
    await vc.control.drop({ method: 'CurrentTime', when: 'before' });
    const l = await soap(vc, login(vc, 'SessionManager'));
    await expect(soap(vc, currentTime, l.cookie)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect((await soap(vc, currentTime, l.cookie)).status).toBe(200);

    // "after": the datastore exists although the caller never got an answer
    await vc.control.drop({ method: 'CreateVmfsDatastore', when: 'after' });
    const host = 'DC0_C0_H2';
    const res = await probe(vc, [
      { op: 'create-vmfs', host, disk: disk(host, 16).canonicalName, name: 'ambiguous', major: 6 },
      { op: 'datastores' },
    ]);
    expect(res[0]).toMatchObject({ ok: false, fault: 'ConnectionError' });
    expect(res[1]?.names).toContain('ambiguous');
    expect((await vc.control.calls()).CreateVmfsDatastore).toBeGreaterThanOrEqual(1);
  });

  it('keeps a slow task running so a watcher sees the state change', async () => {
    await vc.control.slowTask('CreateVirtualDisk_Task', 1500);
    const r = await probeOne(vc, { op: 'create-vdisk-observe', datacenter: 'DC0', name: '[LocalDS_0] slow.vmdk' });
    await vc.control.slowTask('CreateVirtualDisk_Task', 0);
    expect(r).toMatchObject({ ok: true, firstState: 'running', finalState: 'success' });
    const seen = r.seen as { name: string; val: unknown }[];
    expect(seen.filter((c) => c.name === 'info.state').map((c) => c.val)).toEqual(['running', 'success']);
    expect(seen.filter((c) => c.name === 'info.progress').map((c) => c.val)).toContain(50);
  });

  it('holds calls and tasks until the test releases them (a barrier instead of a delay)', async () => {
    await vc.control.reset();
    // a held call: logged as held, not answered (nor executed) until released
    const l = await soap(vc, login(vc, 'SessionManager'));
    await vc.control.hold('CurrentTime');
    let answered = false;
    const call = soap(vc, currentTime, l.cookie).then((r) => ((answered = true), r));
    await waitFor(async () => heldCalls(await vc.control.log(), 'CurrentTime').length === 1, { what: 'CurrentTime held' });
    expect(answered).toBe(false);
    expect(await vc.control.release('CurrentTime')).toEqual({ calls: 1, tasks: 0 });
    expect((await call).status).toBe(200);
    // released: the hold is over, the next call goes through
    expect((await soap(vc, currentTime, l.cookie)).status).toBe(200);
    // a held task: answered at once, running (progress 0) until released, then its real outcome
    await vc.control.hold('CreateVirtualDisk_Task', { task: true });
    const observed = probeOne(vc, { op: 'create-vdisk-observe', datacenter: 'DC0', name: '[LocalDS_0] held.vmdk' });
    // (pyVmomi read the task's state, then watches it with WaitForUpdatesEx)
    await waitFor(async () => taskAwaited(await vc.control.log(), 'CreateVirtualDisk_Task'), { what: 'the held disk task watched' });
    expect(heldTasks(await vc.control.log(), 'CreateVirtualDisk_Task')).toHaveLength(1);
    expect(await vc.control.release('CreateVirtualDisk_Task')).toEqual({ calls: 0, tasks: 1 });
    expect(await observed).toMatchObject({ ok: true, firstState: 'running', finalState: 'success' });
    const task = (await vc.control.log()).find((e) => e.method === 'CreateVirtualDisk_Task')!;
    expect(task).toMatchObject({ held: true, taskEnd: expect.any(Number) });
    // reset lets go of what is held too
    await vc.control.hold('CurrentTime');
    const late = soap(vc, currentTime, l.cookie);
    await waitFor(async () => heldCalls(await vc.control.log(), 'CurrentTime').length === 1, { what: 'CurrentTime held again' });
    await vc.control.reset();
    expect((await late).status).toBe(200);
    await expect(vc.control.hold('CurrentTime', { task: true })).rejects.toThrow(/not a \*_Task method/);
  });
});

describe('vcsim harness (session idle timeout)', () => {
  it('invalidates a session left idle longer than the timeout', async () => {
    const vc = await startVcsim({ sessionIdleTimeoutSec: 1 });
    try {
      const l = await soap(vc, login(vc, 'SessionManager'));
      expect((await soap(vc, currentTime, l.cookie)).status).toBe(200);
      // the idle stretch itself is what is tested: longer than the 1 s timeout, nothing sent
      await hold(1_500);
      const denied = await soap(vc, currentTime, l.cookie);
      expect(denied.status).toBe(500);
      expect(denied.text).toContain('NotAuthenticated');
    } finally {
      await vc.stop();
    }
  });
});

describe('vcsim harness (ESXi model)', () => {
  let esx: VcsimHandle;
  beforeAll(async () => {
    esx = await startVcsim({ esx: true });
  });
  afterAll(async () => {
    await esx?.stop();
  });

  it('is a HostAgent with LUNs on ha-host that formats VMFS', async () => {
    expect(esx.apiType).toBe('HostAgent');
    const [about, luns] = await probe(esx, [{ op: 'about' }, { op: 'luns', host: 'localhost.localdomain' }]);
    expect(about).toMatchObject({ ok: true, apiType: 'HostAgent', hosts: ['localhost.localdomain'] });
    const avail = luns?.available as Lun[];
    expect(avail.length).toBe(4);
    const res = await probe(esx, [
      { op: 'create-vmfs', host: 'localhost.localdomain', disk: avail[0]?.canonicalName, name: 'esx-v6', major: 6 },
      { op: 'datastore', name: 'esx-v6' },
    ]);
    expect(res[1]).toMatchObject({ type: 'VMFS', majorVersion: 6, blockSize: 1024 });
  });
});

describe('vcsim harness (detached, as `npm run lab -- up` uses it)', () => {
  it('keeps running on its own and stops by pid', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vcsim-detached-'));
    const vc = await startVcsim({ detached: true, logFile: path.join(dir, 'vcsim.log'), dataDir: path.join(dir, 'data') });
    try {
      expect(() => process.kill(vc.pid, 0)).not.toThrow();
      expect(vc.certFile.startsWith(path.join(dir, 'data'))).toBe(true);
      const control = vcsimControl({ url: vc.url, certFile: vc.certFile });
      const [about] = await probe(vc, [{ op: 'about' }]);
      expect(about).toMatchObject({ ok: true });
      expect((await control.calls()).Login).toBe(1);
    } finally {
      await stopVcsimPid(vc.pid);
      await fs.rm(dir, { recursive: true, force: true });
    }
    expect(() => process.kill(vc.pid, 0)).toThrow();
  });
});
