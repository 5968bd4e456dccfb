// Linked clones (`vm.clone: linked`, issue 32 item 1; docs/decisions/0093-linked-clones.md).
// 1. The lab is as strict as vSphere (src/lab/harness/vcsim/linked_clones.go), read by pyvmomi: a
//    linked clone without a snapshot is refused; one of a snapshot has child disks whose parent is the
//    snapshot's disk; the snapshot and the template are not removed while the clone hangs on them.
// 2. Ownership is proven by the host (operations/template-snapshot.ts, clone-vm.ts): a recorded id
//    that is now a user's snapshot is not ours (left alone); a linked clone is destroyed only while
//    its parent chain leaves its folder through the permutation's own snapshot.
// 3. playbooks/vm-scaling.yaml on the embedded lab with vm.count [1, 2] and vm.clone linked: one
//    snapshot per permutation, taken before its clones and removed after all of them (call log);
//    the user's own snapshot of the template untouched (pyvmomi); kill -9 while the clones measure,
//    then `storsweep cleanup` or `run --resume`, leave no clone and no snapshot of ours.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderContext } from '../../src/contract/provider.ts';
import { UnsafeOperation } from '../../src/errors.ts';
import type { LedgerRow } from '../../src/results/port.ts';
import { destroyRecorded } from '../../src/run/teardown.ts';
import { labPaths, TOOLS_LINUX_VM } from '../../src/lab/lab.ts';
import { startVcsim, type HarnessCall, type VcsimHandle } from '../../src/lab/vcsim.ts';
import { createVsphereProvider } from '../../src/providers/vsphere/provider.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { probe, probeOne, type ProbeEndpoint } from '../helpers/pyvmomi-probe.ts';
import { runCliWhen, simTarget } from '../helpers/vsphere-lab.ts';
import { useEmbeddedLab } from '../helpers/embedded-lab.ts';

const RUN = 'r1link';
const PERM = 'p0123456789ab';
const CLONE = `ss-${RUN}-${PERM}-vm1`;
const SNAP = `ss-${RUN}-${PERM}-snap`;
const TEMPLATE = 'DC0_H0_VM0';

interface Disk {
  fileName: string;
  parents: string[];
  deltaDiskFormat: string | null;
}
interface Tree {
  name: string;
  id: string;
  children: Tree[];
}
const flat = (t: Tree[]): Tree[] => t.flatMap((n) => [n, ...flat(n.children)]);

describe('the lab and the provider on the vcsim harness', () => {
  let sim: VcsimHandle;
  const ctx: ProviderContext = { runId: RUN, permutationId: PERM, axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
  const disks = async (vm: string) => (await probeOne(sim, { op: 'vm-disks', vm })).disks as Disk[];
  const snapshots = async (vm: string) => flat((await probeOne(sim, { op: 'snapshots', vm })).tree as Tree[]);
  const calls = async (method: string) => (await sim.control.log()).filter((c) => c.method === method);

  beforeAll(async () => {
    sim = await startVcsim({ username: 'administrator@vsphere.local', password: `vc-Secret-${Math.random().toString(36).slice(2, 10)}` });
  }, 120_000);
  afterAll(async () => {
    await sim?.stop();
  });

  it('refuses a linked clone without a snapshot; a linked clone\'s disks are children of the snapshot\'s; its snapshot and template stay while it exists', async () => {
    const [noSnap] = await probe(sim, [{ op: 'clone-linked', vm: TEMPLATE, name: 'linked-nosnap' }]);
    expect(noSnap).toMatchObject({ ok: false, fault: 'InvalidArgument' });
    expect((await probeOne(sim, { op: 'about' })).vms).not.toContain('linked-nosnap');

    const base = (await disks(TEMPLATE)).map((d) => d.fileName);
    expect(base.length).toBeGreaterThan(0);
    expect((await probeOne(sim, { op: 'create-snapshot', vm: TEMPLATE, name: 'base' })).ok).toBe(true);
    expect((await probeOne(sim, { op: 'clone-linked', vm: TEMPLATE, name: 'linked-1', snapshot: 'base' })).ok).toBe(true);
    const child = await disks('linked-1');
    expect(child.map((d) => d.parents[0])).toEqual(base);
    for (const d of child) {
      expect(d.deltaDiskFormat).toBe('redoLogFormat');
      expect(d.fileName).toMatch(/^\[[^\]]+\] linked-1\//);
    }

    // while the clone hangs on them: neither the snapshot nor the template goes
    expect(await probeOne(sim, { op: 'remove-snapshot', vm: TEMPLATE, name: 'base' })).toMatchObject({ ok: false, fault: 'ResourceInUse' });
    expect(await probeOne(sim, { op: 'destroy-vm', vm: TEMPLATE })).toMatchObject({ ok: false, fault: 'ResourceInUse' });
    expect((await snapshots(TEMPLATE)).map((s) => s.name)).toEqual(['base']);
    // the clone first, then the snapshot
    expect((await probeOne(sim, { op: 'destroy-vm', vm: 'linked-1' })).ok).toBe(true);
    expect((await probeOne(sim, { op: 'remove-snapshot', vm: TEMPLATE, name: 'base' })).ok).toBe(true);
    expect(await snapshots(TEMPLATE)).toEqual([]);
  }, 120_000);

  it('leaves a user\'s snapshot alone under a recorded id; destroys a linked clone only while its parent is the permutation\'s own snapshot', async () => {
    const provider = createVsphereProvider(simTarget(sim, ['naa.unused0', 'naa.unused1']));
    try {
      await sim.control.reset();
      expect((await probeOne(sim, { op: 'create-snapshot', vm: TEMPLATE, name: 'users-own' })).ok).toBe(true);
      const users = (await snapshots(TEMPLATE)).find((s) => s.name === 'users-own')!;
      // a ledger row of ours whose recorded id is now the user's snapshot: not ours, absent
      const row = { kind: 'snapshot', name: SNAP, provider: 'vsphere' as const, id: users.id, data: { vm: TEMPLATE } };
      expect(await provider.destroy(row, ctx)).toBe('absent');
      expect(await calls('RemoveSnapshot_Task')).toEqual([]);

      // a clone under our owned name, linked to the user's snapshot: its disks' parent is not our snapshot's
      expect((await probeOne(sim, { op: 'clone-linked', vm: TEMPLATE, name: CLONE, snapshot: 'users-own' })).ok).toBe(true);
      const vm = { kind: 'vm', name: CLONE, provider: 'vsphere' as const, id: null, data: { vm: CLONE } };
      await expect(provider.destroy(vm, ctx)).rejects.toBeInstanceOf(UnsafeOperation);
      expect(await calls('Destroy_Task')).toEqual([]);

      // our own snapshot taken (the same frozen disks): the chain now leaves through it, and the clone may go
      expect((await probeOne(sim, { op: 'create-snapshot', vm: TEMPLATE, name: SNAP })).ok).toBe(true);
      expect(await provider.destroy(vm, ctx)).toBe('removed');
      expect((await probeOne(sim, { op: 'about' })).vms).not.toContain(CLONE);
      // ours by its name: removed; the user's kept
      expect(await provider.destroy({ ...row, id: null }, ctx)).toBe('removed');
      expect((await snapshots(TEMPLATE)).map((s) => s.name)).toEqual(['users-own']);
      expect((await calls('RemoveSnapshot_Task')).map((c) => c.snapshot)).toEqual([SNAP]);
    } finally {
      await provider.close();
    }
  }, 120_000);

  it('keeps our snapshot while a clone of the permutation hangs on it, and never removes another run\'s (teardown\'s owned-name rule)', async () => {
    const provider = createVsphereProvider(simTarget(sim, ['naa.unused0', 'naa.unused1']));
    try {
      await sim.control.reset();
      const other = `ss-r2other-${PERM}-snap`;
      expect((await probeOne(sim, { op: 'create-snapshot', vm: TEMPLATE, name: SNAP })).ok).toBe(true);
      expect((await probeOne(sim, { op: 'create-snapshot', vm: TEMPLATE, name: other })).ok).toBe(true);
      expect((await probeOne(sim, { op: 'clone-linked', vm: TEMPLATE, name: CLONE, snapshot: SNAP })).ok).toBe(true);
      const row = { kind: 'snapshot', name: SNAP, provider: 'vsphere' as const, id: null, data: { vm: TEMPLATE } };
      // refused by us, before the host is asked (the harness would refuse too)
      await expect(provider.destroy(row, ctx)).rejects.toThrow(/still the parent of linked clone ss-r1link-p0123456789ab-vm1/);
      // a ledger row naming another run's snapshot: refused before the provider looks
      const ledger: LedgerRow = { ...row, name: other, seq: 1, permutationId: PERM, objectId: null, data: { vm: TEMPLATE }, state: 'created', error: null };
      await expect(destroyRecorded(provider, ledger, ctx)).rejects.toBeInstanceOf(UnsafeOperation);
      expect(await calls('RemoveSnapshot_Task')).toEqual([]);
      expect((await snapshots(TEMPLATE)).map((s) => s.name).sort()).toEqual([SNAP, other, 'users-own'].sort());
      // the clone gone: ours goes, the other run's and the user's stay
      expect((await probeOne(sim, { op: 'destroy-vm', vm: CLONE })).ok).toBe(true);
      expect(await destroyRecorded(provider, { ...ledger, name: SNAP }, ctx)).toBe('removed');
      expect((await snapshots(TEMPLATE)).map((s) => s.name).sort()).toEqual([other, 'users-own'].sort());
    } finally {
      await provider.close();
    }
  }, 120_000);
});

describe('playbooks/vm-scaling.yaml with vm.clone linked on the embedded lab', () => {
  const PLAYBOOK = path.join(REPO_ROOT, 'playbooks', 'vm-scaling.yaml');
  const USERS = 'before-upgrade';
  // a measured fio pass as the guest lists it (not the pre-fill's job)
  const FIO_PASS = /(^|[\s/'"])fio\s+--name=(?!storsweep-prefill)/;
  // the lab guests are local users: their directories under the lab's lab.root are reachable (useEmbeddedLab)
  const lab = useEmbeddedLab('ss-vmlinked-', { vcsim: true });
  let vc: ProbeEndpoint;
  const isOurs = (name: string) => name.startsWith('ss-');
  const clonesNow = async () => ((await probeOne(vc, { op: 'about' })).vms as string[]).filter(isOurs);
  const templateSnapshots = async () => flat((await probeOne(vc, { op: 'snapshots', vm: TOOLS_LINUX_VM })).tree as Tree[]).map((t) => t.name);
  const args = (runsDir: string, ...set: string[]) => ['run', PLAYBOOK, '-i', labPaths(lab.root).inventory, '--out', runsDir, '--json', '--no-report', '--set', 'matrix.vm.clone=[linked]', ...set.flatMap((x) => ['--set', x])];

  /**
   * Each snapshot of ours: taken (CreateSnapshot_Task) before each clone of its permutation, and
   * removed (RemoveSnapshot_Task) only after that clone's Destroy_Task ended; as many removed as
   * taken (a resume may take it again); never the user's.
   */
  function expectSnapshotOutlivesClones(log: HarnessCall[]): void {
    const made = log.filter((c) => c.method === 'CreateSnapshot_Task');
    expect(made.length).toBeGreaterThan(0);
    for (const name of new Set(made.map((m) => m.snapshot!))) {
      expect(name).toMatch(/^ss-r[0-9a-z]+-p[0-9a-f]{12}-snap$/);
      const creates = made.filter((m) => m.snapshot === name);
      const removes = log.filter((c) => c.method === 'RemoveSnapshot_Task' && c.snapshot === name);
      for (const c of [...creates, ...removes]) expect(c.vm).toBe(TOOLS_LINUX_VM);
      expect(removes).toHaveLength(creates.length);
      const prefix = name.replace(/-snap$/, '-vm');
      const clones = log.filter((c) => c.method === 'CloneVM_Task' && c.vm!.startsWith(prefix));
      expect(clones.length).toBeGreaterThan(0);
      for (const c of clones) {
        const taken = creates.filter((m) => m.end < c.start).pop();
        expect(taken, `${c.vm} was cloned before its snapshot was taken`).toBeDefined();
        const removed = removes.find((r) => r.start > taken!.end)!;
        const destroyed = log.find((d) => d.method === 'Destroy_Task' && d.vm === c.vm && d.start > c.end);
        expect(destroyed, `${c.vm} was never destroyed`).toBeDefined();
        expect(removed.start, `snapshot ${name} removed before ${c.vm} was destroyed`).toBeGreaterThan(destroyed!.end);
      }
    }
    // never the user's
    expect(log.filter((c) => c.method === 'RemoveSnapshot_Task' && !isOurs(c.snapshot ?? ''))).toEqual([]);
  }

  beforeAll(async () => {
    vc = await lab.endpoint();
    // the user's own snapshot of the template, there before any run
    expect((await probeOne(vc, { op: 'create-snapshot', vm: TOOLS_LINUX_VM, name: USERS })).ok).toBe(true);
  }, 300_000);

  it('vm.count [1, 2]: linked clones measured, each snapshot removed after its clones; the user\'s snapshot kept', async () => {
    await lab.control.reset();
    const cli = await runCli(args(path.join(lab.root, 'runs'), 'matrix.vm.count=[1, 2]'), { cwd: lab.root, timeoutMs: 300_000 });
    expect(cli.code, cli.stdout + cli.stderr).toBe(0);
    const log = await lab.control.log();
    expect(log.filter((c) => c.method === 'CreateSnapshot_Task')).toHaveLength(2);
    expect(log.filter((c) => c.method === 'CloneVM_Task')).toHaveLength(3);
    expectSnapshotOutlivesClones(log);
    expect(await clonesNow()).toEqual([]);
    expect(await templateSnapshots()).toEqual([USERS]);
    const runDir = path.resolve(lab.root, (JSON.parse(cli.stdout.trim().split('\n').pop() ?? '{}') as { runDir?: string }).runDir ?? '');
    const recs = (await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { axes: Record<string, unknown>; vm?: { role: string } });
    expect(recs.filter((r) => r.vm?.role === 'member')).toHaveLength(1 + 2);
    for (const r of recs) expect(r.axes['vm.clone']).toBe('linked');
  }, 300_000);

  it('kill -9 while the linked clone measures, then run --resume: the clone read back as a child of our snapshot, then neither left (pyvmomi, call log)', async () => {
    await lab.control.reset();
    const runsDir = path.join(lab.root, 'killed');
    let measuring = false;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const running = await lab.control.guestProcesses().catch(() => []);
        measuring = running.some((p) => isOurs(p.vm) && FIO_PASS.test(p.cmdLine));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    // passes long enough that the killed run's fio is still measuring when it is killed
    const killed = await runCliWhen(args(runsDir, 'matrix.vm.count=[1]', 'settings.runtimeSec=3'), { runsDir }, () => measuring, (pid) => void process.kill(pid, 'SIGKILL'));
    polling = false;
    await poll;
    expect(killed.fired, killed.stdout + killed.stderr).toBe(true);
    expect(killed.code).toBeNull();

    // what the killed run left: one linked clone whose disks are children of our snapshot's disks
    const [clone, ...more] = await clonesNow();
    expect(more).toEqual([]);
    const snaps = await templateSnapshots();
    const ours = snaps.filter(isOurs);
    expect(ours).toEqual([clone!.replace(/-vm1$/, '-snap')]);
    expect(snaps).toContain(USERS);
    const templateDisks = ((await probeOne(vc, { op: 'vm-disks', vm: TOOLS_LINUX_VM })).disks as Disk[]).map((d) => d.fileName);
    const cloneDisks = (await probeOne(vc, { op: 'vm-disks', vm: clone })).disks as Disk[];
    const children = cloneDisks.filter((d) => d.parents.length > 0);
    expect(children.map((d) => d.parents[0])).toEqual(templateDisks);
    for (const d of children) expect(d.deltaDiskFormat).toBe('redoLogFormat');

    const resumed = await runCli(['run', '--resume', killed.runDir!, '--json', '--no-report'], { cwd: lab.root, timeoutMs: 300_000 });
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(await clonesNow()).toEqual([]);
    expect(await templateSnapshots()).toEqual([USERS]);
    expectSnapshotOutlivesClones(await lab.control.log());
  }, 300_000);
});
