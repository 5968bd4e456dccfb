// The ESXi-shell provider end to end: a real OpenSSH server on 127.0.0.1 whose sessions find the
// strict ESXi tool stand-ins (src/lab/harness/esxi) first on PATH; the provider talks to it through the
// real SSH runner. Assertions are on the exact argv the stand-ins received and the state they keep.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnsafeOperation } from '../../src/errors.ts';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import type { EsxiShellTargetConfig } from '../../src/providers/esxi-shell/config.ts';
import { planEsxiShellSteps } from '../../src/providers/esxi-shell/plan.ts';
import { createEsxiShellProvider } from '../../src/providers/esxi-shell/provider.ts';
import { VMFS_GPT_GUID } from '../../src/providers/esxi-shell/partedutil.ts';
import type { CreatedObject, ProviderContext } from '../../src/contract/provider.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { cleanupLedger } from '../../src/run/teardown.ts';
import { executeSteps } from '../helpers/executor-run.ts';
import { BLANK_DEV, BOOT_DEV, defaultEsxiState, ESXI_HARNESS_DIR, PARTITIONED_DEV, RDM_DEV, readCommands, readEsxiState, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import { ensureSystemUser } from '../helpers/system-user.ts';

const USER = 'ssesxi';
const PASSWORD = 'Esx!-pa$$ word';
let dir: string;
let stateDir: string;
let sshd: SshdHandle;
let keyPath: string;
let knownHosts: string;

const ctx: ProviderContext = { runId: 'r1', permutationId: 'p1', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: EsxiShellTargetConfig = { host: 'esx-standin', vmid: '1', datastoreVolumePath: '/vmfs/volumes/datastore1', vmfsDevice: BLANK_DEV, rdmDevice: RDM_DEV, allowedDevices: [BLANK_DEV, RDM_DEV] };
const userAccount = ensureSystemUser(USER, PASSWORD);

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-esxi-'));
  stateDir = path.join(dir, 'state');
  await seedEsxiState(stateDir);
  // the password user runs the stand-ins too
  await fs.chmod(dir, 0o755);
  await fs.chmod(stateDir, 0o777);
  for (const f of await fs.readdir(stateDir)) await fs.chmod(path.join(stateDir, f), 0o666);
  const key = await ensureKeyPair(path.join(dir, 'client_key'));
  keyPath = key.privateKeyPath;
  // A copy of the stand-ins in the world-readable test dir: the password user must reach them even
  // when the checkout itself sits in a private directory (e.g. a clone in `mktemp -d`).
  const bin = path.join(dir, 'esxi-bin');
  await fs.cp(ESXI_HARNESS_DIR, bin, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], keyboardInteractive: true, passwordAuth: true, pathPrefix: [bin], env: { STORSWEEP_STANDIN_STATE: stateDir } });
  knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
});

afterAll(async () => {
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const keyRunner = () => connectSsh({ host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: keyPath, knownHostsFile: knownHosts });
const line = (c: { tool: string; argv: string[] }) => [c.tool, ...c.argv].join(' ');

async function resetState(state: Record<string, unknown> = defaultEsxiState()) {
  await seedEsxiState(stateDir, state);
  for (const f of await fs.readdir(stateDir)) await fs.chmod(path.join(stateDir, f), 0o666);
}

describe('esxi-shell provider over SSH (stand-in ESXi tools)', () => {
  it('creates a VMFS3 with 8 MiB blocks, an eagerzeroedthick disk, attaches it, and tears it all down', async () => {
    await resetState(defaultEsxiState('5.5')); // VMFS3 is created by ESXi 5.x only
    const provider = createEsxiShellProvider(target, await keyRunner());
    // the host's steps (the guest-disk step, in the guest: esxi-guest-disk.test.ts)
    const steps = planEsxiShellSteps({ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 8, 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 10 }, target, { base: 'ss-r1-p1' }).filter((s) => s.step !== 'guest-disk');
    const created: CreatedObject[] = [];
    for (const s of steps) {
      const o = await provider.apply(s, ctx);
      if (o) created.push(o);
    }
    const dev = `/vmfs/devices/disks/${BLANK_DEV}`;
    const disk = '/vmfs/volumes/ss-r1-p1-ds/ss-r1-p1-disk.vmdk';
    expect((await readCommands(stateDir)).map(line)).toEqual([
      `esxcli storage core device list -d ${BLANK_DEV}`,
      'esxcli storage vmfs extent list',
      `partedUtil getptbl ${dev}`,
      `partedUtil mklabel ${dev} msdos`,
      `partedUtil getUsableSectors ${dev}`,
      `partedUtil setptbl ${dev} msdos 1 128 41943039 251 0`,
      'esxcli storage vmfs extent list',
      `partedUtil getptbl ${dev}`,
      `vmkfstools -C vmfs3 -b 8m -S ss-r1-p1-ds ${dev}:1`,
      'vmkfstools -P /vmfs/volumes/ss-r1-p1-ds',
      `vmkfstools -c 10g -d eagerzeroedthick ${disk}`,
      // the VM's disks listed first: ours goes on the lowest free unit (0:0 is the system disk)
      'vim-cmd vmsvc/device.getdevices 1',
      `vim-cmd vmsvc/device.diskaddexisting 1 ${disk} 0 1`,
    ]);
    // the partition spec reached partedUtil as ONE argument
    expect((await readCommands(stateDir))[5]!.argv).toEqual(['setptbl', dev, 'msdos', '1 128 41943039 251 0']);
    let state = await readEsxiState(stateDir);
    const vol = Object.values(state.volumes as Record<string, { label: string; blockSize: number; version: string }>).find((v) => v.label === 'ss-r1-p1-ds');
    expect(vol).toMatchObject({ blockSize: 8388608, version: 'vmfs3' });
    expect(state.vms['1']!.disks['0:1']).toBe(disk);
    expect(created.map((o) => [o.kind, o.id])).toEqual([
      ['vmfs-partition', `${BLANK_DEV}:1`],
      ['datastore', expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{12}$/)],
      ['disk', disk],
      ['disk-attachment', '1:0:1'],
    ]);
    expect(await provider.find({ kind: 'datastore', name: 'ss-r1-p1-ds' })).toMatchObject({ id: created[1]!.id });
    expect(await provider.find({ kind: 'disk-attachment', name: 'ss-r1-p1-attach' })).toMatchObject({ id: '1:0:1' });

    // removing the datastore unmounts it and deletes its partition, on the device the host shows
    // its label on; the partition's own row then finds nothing left
    const outcomes: [string, string][] = [];
    for (const o of [...created].reverse()) outcomes.push([o.kind, await provider.destroy(o, ctx)]);
    expect(outcomes).toEqual([
      ['disk-attachment', 'removed'],
      ['disk', 'removed'],
      ['datastore', 'removed'],
      ['vmfs-partition', 'absent'],
    ]);
    state = await readEsxiState(stateDir);
    expect(state.devices[BLANK_DEV]!.partitions).toEqual([]);
    expect(Object.values(state.volumes).filter((v) => (v as { mounted: boolean }).mounted)).toHaveLength(1);
    expect(state.files[disk]).toBeUndefined();
    expect(state.vms['1']!.disks).toEqual({ '0:0': '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk' });
    // idempotent: a second teardown finds nothing left
    for (const o of [...created].reverse()) expect(await provider.destroy(o, ctx)).toBe('absent');
    await provider.close();
  });

  it('refuses to format a device that is not allowed, partitioned or a VMFS extent, sending nothing destructive', async () => {
    await resetState();
    const runner = await keyRunner();
    const step = (device: string) => planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, { ...target, vmfsDevice: device, allowedDevices: [device] }, { base: 'ss-r1-p2' })[0]!;
    const notAllowed = createEsxiShellProvider({ ...target, allowedDevices: [RDM_DEV] }, runner);
    await expect(notAllowed.apply(step(BLANK_DEV), ctx)).rejects.toThrow(/not in allowedDevices/);
    expect(await readCommands(stateDir)).toEqual([]);

    await expect(createEsxiShellProvider({ ...target, allowedDevices: [PARTITIONED_DEV] }, runner).apply(step(PARTITIONED_DEV), ctx)).rejects.toThrow(/has 1 partition/);
    await expect(createEsxiShellProvider({ ...target, allowedDevices: [BOOT_DEV] }, runner).apply(step(BOOT_DEV), ctx)).rejects.toThrow(UnsafeOperation);
    const sent = (await readCommands(stateDir)).map(line);
    expect(sent.filter((c) => /mklabel|setptbl|vmkfstools -C|delete/.test(c))).toEqual([]);
    const state = await readEsxiState(stateDir);
    expect(state.devices[PARTITIONED_DEV]!.partitions[0]!.type).toBe('EBD0A0A2B9E5443387C068B6B72699C7');
    expect(state.devices[BOOT_DEV]!.partitions).toHaveLength(2);
    await runner.close();
  });

  it('maps a physical RDM on an existing datastore over keyboard-interactive auth (like ESXi)', async (t) => {
    if (!userAccount.ok) t.skip(userAccount.reason);
    await resetState();
    const runner = await connectSsh({ host: sshd.host, port: sshd.port, username: USER, password: PASSWORD, keyboardInteractive: true, knownHostsFile: knownHosts });
    const provider = createEsxiShellProvider(target, runner);
    const steps = planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'rdm-physical' }, target, { base: 'ss-r1-p3' }).filter((s) => s.step !== 'guest-disk');
    const created = [];
    for (const s of steps) created.push(await provider.apply(s, ctx));
    const rdm = '/vmfs/volumes/datastore1/ss-r1-p3-disk.vmdk';
    const sent = (await readCommands(stateDir)).map(line);
    expect(sent.slice(-3)).toEqual([`vmkfstools -z /vmfs/devices/disks/${RDM_DEV} ${rdm}`, 'vim-cmd vmsvc/device.getdevices 1', `vim-cmd vmsvc/device.diskaddexisting 1 ${rdm} 0 1`]);
    expect((await readEsxiState(stateDir)).files[rdm]).toEqual({ kind: 'rdmp', device: RDM_DEV, sizeBytes: 0 });
    for (const o of created.reverse()) if (o) expect(await provider.destroy(o, ctx)).toBe('removed');
    expect((await readEsxiState(stateDir)).files[rdm]).toBeUndefined();
    await provider.close();
  });

  it('creates a VMFS6 with a GPT partition at sector 2048 over password auth', async (t) => {
    if (!userAccount.ok) t.skip(userAccount.reason);
    await resetState();
    const runner = await connectSsh({ host: sshd.host, port: sshd.port, username: USER, password: PASSWORD, knownHostsFile: knownHosts });
    const provider = createEsxiShellProvider(target, runner);
    const steps = planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 2 }, target, { base: 'ss-r1-p4' });
    await provider.apply(steps[0]!, ctx);
    await provider.apply(steps[1]!, ctx);
    const state = await readEsxiState(stateDir);
    expect(state.devices[BLANK_DEV]).toMatchObject({ label: 'gpt', partitions: [{ number: 1, start: 2048, end: 41943006, type: VMFS_GPT_GUID, attr: 0 }] });
    await provider.close();
  });

  it('a refused format never deletes a partition: not in teardown, not in cleanup with another inventory, not from a legacy intent row', async () => {
    // Someone's unmounted VMFS datastore on each of two allowed LUNs (issue 11, item 1).
    const state = defaultEsxiState() as { devices: Record<string, Record<string, unknown>>; volumes: Record<string, unknown> };
    const vmfs = (end: number) => ({ label: 'gpt', partitions: [{ number: 1, start: 2048, end, type: VMFS_GPT_GUID, attr: 0 }] });
    Object.assign(state.devices[BLANK_DEV]!, vmfs(41943006));
    Object.assign(state.devices[RDM_DEV]!, vmfs(20971486));
    state.volumes['aaaaaaaa-bbbbbbbb-cccc-000000000001'] = { label: 'users-ds', device: BLANK_DEV, partition: 1, version: 'vmfs6', blockSize: 1048576, capacity: 19 * 1024 ** 3, mounted: false };
    state.volumes['aaaaaaaa-bbbbbbbb-cccc-000000000002'] = { label: 'users-ds2', device: RDM_DEV, partition: 1, version: 'vmfs6', blockSize: 1048576, capacity: 9 * 1024 ** 3, mounted: false };
    await resetState(state);
    const before = await readEsxiState(stateDir);
    const tgt: EsxiShellTargetConfig = { ...target, allowedDevices: [BLANK_DEV] };
    const steps = planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, tgt, { base: 'ss-r9-p1' });
    const provider = createEsxiShellProvider(tgt, await keyRunner());
    const { store, summary } = await executeSteps(dir, 'r9', steps, provider);
    expect(summary.failed).toBe(1);
    expect(store.permutations()[0]!.reason).toMatch(/refusing partitioning on .*: it has 1 partition\(s\)/);
    expect(store.ledger().map((r) => [r.kind, r.state])).toEqual([['vmfs-partition', 'refused']]);
    const destructive = (cmds: { tool: string; argv: string[] }[]) => cmds.map(line).filter((c) => /partedUtil (delete|mklabel|setptbl)|vmkfstools -C|unmount/.test(c));
    expect(destructive(await readCommands(stateDir))).toEqual([]);
    expect(await readEsxiState(stateDir)).toEqual(before);

    // cleanup of that refused run, with an inventory whose vmfsDevice is the other LUN
    const other = createEsxiShellProvider({ ...target, vmfsDevice: RDM_DEV, allowedDevices: [RDM_DEV] }, await keyRunner());
    expect(await cleanupLedger(store, async () => other, () => undefined)).toBe(0);
    // and a run directory written by an older storsweep: an intent row for the partition, nothing else
    store.ledgerIntent('p1', 'esxi-shell', steps[0]!.creates!, { operation: steps[0]!.operation, arguments: steps[0]!.arguments });
    const said: string[] = [];
    expect(await cleanupLedger(store, async () => other, (l) => said.push(l))).toBe(0);
    expect(said).toEqual(['never created: vmfs-partition ss-r9-p1-part']);
    expect(destructive(await readCommands(stateDir))).toEqual([]);
    expect(await readEsxiState(stateDir)).toEqual(before);
    store.close();
    await provider.close();
    await other.close();
  });

  it('a partition whose layout is not the one recorded is left alone; the recorded one, with no VMFS of the run on it, is deleted only when its device is confirmed', async () => {
    await resetState();
    const provider = createEsxiShellProvider(target, await keyRunner());
    const [part] = planEsxiShellSteps({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, { base: 'ss-r8-p1' });
    const sent: Record<string, unknown>[] = [];
    const created = (await provider.apply(part!, { ...ctx, sent: (d) => void sent.push(d) }))!;
    // recorded before mklabel (no layout yet) and again before setptbl (the exact layout)
    expect(sent).toEqual([
      { device: BLANK_DEV, partition: 1, label: 'gpt', vmfsVersion: 'vmfs6', holds: { kind: 'datastore', name: 'ss-r8-p1-ds' } },
      { device: BLANK_DEV, partition: 1, label: 'gpt', vmfsVersion: 'vmfs6', startSector: 2048, endSector: 41943006, type: VMFS_GPT_GUID, holds: { kind: 'datastore', name: 'ss-r8-p1-ds' } },
    ]);
    // a crash before setptbl: the only record is the first one; nothing of ours can exist
    expect(await provider.destroy({ ...created, id: null, data: sent[0]! }, ctx)).toBe('absent');
    // another layout than the recorded one (someone re-partitioned the LUN since): not ours
    expect(await provider.destroy({ ...created, id: null, data: { ...sent[1]!, endSector: 41943000 } }, ctx)).toBe('absent');
    expect((await readEsxiState(stateDir)).devices[BLANK_DEV]!.partitions).toHaveLength(1);
    // a crash after setptbl, before the id came back: the layout matches, but the host shows no
    // mark of the run on it (no VMFS of ours): deleted only on a device this command confirmed
    await expect(provider.destroy({ ...created, id: null, data: sent[1]! }, ctx)).rejects.toThrow(`refusing to delete partition 1 on ${BLANK_DEV}: it carries no mark of this run: no VMFS volume ss-r8-p1-ds is on it`);
    expect((await readEsxiState(stateDir)).devices[BLANK_DEV]!.partitions).toHaveLength(1);
    expect(await provider.destroy({ ...created, id: null, data: sent[1]! }, { ...ctx, confirmedDestroy: [BLANK_DEV] })).toBe('removed');
    expect((await readEsxiState(stateDir)).devices[BLANK_DEV]!.partitions).toEqual([]);
    await provider.close();
  });

  it("unit 0:1 holds the user's disk: ours goes on the next free unit, the user's disk stays where it is, untouched, through teardown", async () => {
    const state = defaultEsxiState() as { vms: Record<string, { disks: Record<string, string> }>; files: Record<string, unknown> };
    const users = '/vmfs/volumes/datastore1/bench-vm/users-data.vmdk';
    state.vms['1']!.disks['0:1'] = users;
    state.files[users] = { kind: 'vmdk', sizeBytes: 1024 ** 3, format: 'thin', allocated: false };
    await resetState(state);
    const provider = createEsxiShellProvider(target, await keyRunner());
    const steps = planEsxiShellSteps({ 'datastore.kind': 'existing', 'disk.format': 'thin', 'disk.sizeGb': 1 }, target, { base: 'ss-r7-p1' }).filter((s) => s.step !== 'guest-disk');
    const { store, summary } = await executeSteps(dir, 'r7', steps, provider);
    expect(summary).toMatchObject({ done: 1, failed: 0 });
    const ours = '/vmfs/volumes/datastore1/ss-r7-p1-disk.vmdk';
    const cmds = (await readCommands(stateDir)).map(line);
    expect(cmds.filter((c) => /diskaddexisting|diskremove/.test(c))).toEqual([`vim-cmd vmsvc/device.diskaddexisting 1 ${ours} 0 2`, 'vim-cmd vmsvc/device.diskremove 1 0 2 false']);
    // the host after teardown: the user's disk still attached at 0:1 and as it was, ours gone
    const after = await readEsxiState(stateDir);
    expect(after.vms['1']!.disks).toEqual({ '0:0': '/vmfs/volumes/datastore1/bench-vm/bench-vm.vmdk', '0:1': users });
    expect(after.files[users]).toEqual({ kind: 'vmdk', sizeBytes: 1024 ** 3, format: 'thin', allocated: false });
    expect(after.files[ours]).toBeUndefined();
    expect(store.ledger().find((r) => r.kind === 'disk-attachment')).toMatchObject({ state: 'removed', data: { unit: 2 } });
    store.close();
    await provider.close();
  });
});
