// Several controllers on one sweep (issue 17): `storsweep submit` queues a run in a real PostgreSQL,
// `storsweep worker`s (real processes) work through it against the vcsim harness lab. Three targets:
// two on one VM (DC0_H0_VM0, each with its own LUN: they must take turns) and one on another host's
// VM. Checked from outside storsweep: pyvmomi lists what is left in the lab, and the harness's call
// log shows, per VM, when each permutation's disk was attached and detached. Where a worker is
// killed mid-permutation, fio waits at a gate the test closes (test/helpers/fio-gate.ts): the
// worker killed is measuring then, however slow the machine.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listVcsimLuns, vsphereTargetYaml } from '../../src/lab/vsphere-inventory.ts';
import type { HarnessCall } from '../../src/lab/vcsim.ts';
import { PgRunStoreBackend } from '../../src/results/pg-store.ts';
import type { RunStore } from '../../src/results/port.ts';
import { buildReport } from '../../src/report/model.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from '../helpers/postgres.ts';
import { lastJsonLine, stackTraceLines, startCli, submitRun, type CliResult } from '../helpers/cli.ts';
import { fioGate } from '../helpers/fio-gate.ts';
import { descendantPids } from '../helpers/lab-guest.ts';
import { waitFor } from '../helpers/wait.ts';
import { NOTHING_LEFT, startVsphereLab, sweepPlaybook, type VsphereLab } from '../helpers/vsphere-lab.ts';

let pgsrv: TestPostgres;
let lab: VsphereLab;
let playbook: string;
let confirm: string;

beforeAll(async () => {
  pgsrv = await startTestPostgres();
  lab = await startVsphereLab();
  const lunC0 = (await listVcsimLuns({ url: lab.sim.url, username: lab.sim.username, password: lab.password, thumbprint: lab.sim.thumbprint }, 'DC0_C0_H0'))[0]!;
  const lunB = lab.luns[1]!;
  for (const d of ['scratch-2', 'scratch-3']) await fs.mkdir(path.join(lab.dir, d), { recursive: true });
  await fs.appendFile(
    lab.inventory,
    [
      // another VM on another host: runs in parallel with the VM0 targets
      ...vsphereTargetYaml({ name: 'lab-vcenter-2', vcenter: 'lab-vc', host: 'DC0_C0_H0', vm: 'DC0_C0_RP0_VM1', vmfsDevice: lunC0, version: '5.5', guest: { workdir: path.join(lab.dir, 'scratch-2'), byIdDir: lab.byIdDir } }),
      // the same VM as lab-vcenter, its own LUN: the two take turns, across workers too
      ...vsphereTargetYaml({ name: 'lab-vm0-b', vcenter: 'lab-vc', host: 'DC0_H0', vm: 'DC0_H0_VM0', vmfsDevice: lunB, version: '5.5', guest: { workdir: path.join(lab.dir, 'scratch-3'), byIdDir: lab.byIdDir } }),
      '',
    ].join('\n'),
  );
  const book = sweepPlaybook({ name: 'workers', blockSizesMb: [1, 2, 4], formats: ['thin'], repeat: 1 }).replace('target: lab-vcenter\n', 'target: [lab-vcenter, lab-vcenter-2, lab-vm0-b]\n');
  playbook = await lab.writePlaybook('workers.yaml', book);
  confirm = [lab.vmfsDevice, lunC0, lunB].sort().join(',');
}, 180_000);

afterAll(async () => {
  await lab?.stop();
  await pgsrv?.stop();
});

async function submit(db: TestDatabase): Promise<string> {
  return (await submitRun([playbook, '-i', lab.inventory, '--store', db.url, '--confirm-destroy', confirm])).runId;
}

/**
 * A worker process; `pid` as soon as it is spawned. `--lease` only bounds a silent worker (kill -9
 * frees its locks at once); a lease not confirmed for ¾ of it counts as lost, so 10 s leaves a
 * loaded CI machine room.
 */
function worker(db: TestDatabase, out: string, env: Record<string, string> = {}): { pid: number; done: Promise<CliResult> } {
  return startCli(['worker', '-i', lab.inventory, '--store', db.url, '--until-idle', '--poll-ms', '200', '--lease', '10', '--out', out, '--json'], { timeoutMs: 300_000, env });
}

async function openRun(db: TestDatabase, runId: string): Promise<{ backend: PgRunStoreBackend; store: RunStore }> {
  const backend = await PgRunStoreBackend.connect(db.storeConnection, `postgresql://${db.name}`);
  return { backend, store: await backend.openRun(runId) };
}

const keyOf = (r: { permutationId: string; repetition: number; test: { id: string } }) => `${r.permutationId}/${r.repetition}/${r.test.id}`;

/**
 * From the harness's call log: per VM, each disk's span from its attach (ReconfigVM_Task add) to its
 * detach (remove). Two spans on one VM overlapping = two permutations provisioning on it at once.
 */
function diskSpans(calls: HarnessCall[]): Map<string, Array<{ file: string; from: number; to: number; sessions: string[] }>> {
  const open = new Map<string, { vm: string; from: number; session: string }>();
  const out = new Map<string, Array<{ file: string; from: number; to: number; sessions: string[] }>>();
  for (const c of calls) {
    if (c.method !== 'ReconfigVM_Task') continue;
    for (const d of c.devices ?? []) {
      const [op, ...rest] = d.split(' ');
      const file = rest.join(' ');
      if (!file.includes('ss-')) continue;
      if (op === 'add') open.set(file, { vm: c.this, from: c.start, session: c.session ?? '' });
      else if (op === 'remove') {
        const o = open.get(file);
        if (!o) continue;
        open.delete(file);
        out.set(o.vm, [...(out.get(o.vm) ?? []), { file, from: o.from, to: c.start, sessions: [o.session, c.session ?? ''] }]);
      }
    }
  }
  for (const [file, o] of open) out.set(o.vm, [...(out.get(o.vm) ?? []), { file, from: o.from, to: Infinity, sessions: [o.session] }]);
  return out;
}

function overlapping(spans: Map<string, Array<{ file: string; from: number; to: number }>>): string[] {
  const bad: string[] = [];
  for (const [vm, list] of spans) {
    const s = [...list].sort((a, b) => a.from - b.from);
    for (let i = 1; i < s.length; i++) if (s[i]!.from < s[i - 1]!.to) bad.push(`${vm}: ${s[i - 1]!.file} [${s[i - 1]!.from}, ${s[i - 1]!.to}] and ${s[i]!.file} [${s[i]!.from}, ${s[i]!.to}]`);
  }
  return bad;
}

describe('storsweep submit + worker on PostgreSQL', { timeout: 600_000 }, () => {
  let cleanKeys: string[] = [];

  it('two workers share a run: every permutation once, the VM0 targets never at once on VM0, nothing left', async () => {
    await lab.sim.control.reset();
    const db = await pgsrv.database('clean');
    const runId = await submit(db);
    const out = path.join(lab.dir, 'w-clean');
    const ws = [worker(db, out), worker(db, out)];
    const results = await Promise.all(ws.map((w) => w.done));
    for (const r of results) {
      expect(r.code, r.stderr).toBe(0);
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    const summaries = results.map((r) => lastJsonLine<{ done: number }>(r.stdout));
    expect(summaries.reduce((n, s) => n + s.done, 0)).toBe(9);
    const { backend, store } = await openRun(db, runId);
    try {
      expect((await store.permutations()).map((p) => p.status)).toEqual(Array(9).fill('done'));
      const records = await store.records();
      cleanKeys = records.map(keyOf).sort();
      expect(cleanKeys).toHaveLength(9);
      expect(new Set(cleanKeys).size).toBe(9);
      expect(await store.leftovers()).toEqual([]);
      // both workers took part (the journal names who claimed each permutation)
      const claimed = (await store.journal()).filter((j) => j.step === 'worker' && j.event === 'claimed').map((j) => (j.detail as { worker: string }).worker);
      expect(claimed).toHaveLength(9);
    } finally {
      await backend.close();
    }
    const spans = diskSpans(await lab.sim.control.log());
    expect([...spans.values()].flat()).toHaveLength(9);
    expect(overlapping(spans)).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });

  it('three workers, one killed with -9 mid-permutation: another takes it over, cleans up and redoes it; same result keys, no duplicates, nothing left', async () => {
    await lab.sim.control.reset();
    const db = await pgsrv.database('kill');
    const runId = await submit(db);
    const out = path.join(lab.dir, 'w-kill');
    const gate = fioGate(path.join(lab.dir, 'fio-gate-kill'), { open: true });
    const ws = [worker(db, out, gate.env), worker(db, out, gate.env), worker(db, out, gate.env)];
    const { backend, store } = await openRun(db, runId);
    let killed = '';
    try {
      // the seeded point: once two permutations are done, the next fio to start waits at the gate;
      // its worker (the one it descends from) is killed there, its permutation's disk attached
      await waitFor(async () => (await store.permutations()).filter((p) => p.status === 'done').length >= 2, { what: 'two permutations done', timeoutMs: 240_000 });
      gate.close();
      const held = await waitFor(() => gate.held()[0], { what: 'a fio at the gate', timeoutMs: 240_000 });
      const victim = ws.find((w) => descendantPids(w.pid).includes(held.pid))!;
      expect(victim, `fio ${held.pid} is no worker's`).toBeDefined();
      const claims = (await store.journal()).filter((j) => j.step === 'worker' && j.event === 'claimed' && (j.detail as { worker: string }).worker.endsWith(`:${victim.pid}`));
      killed = claims.at(-1)!.permutationId!;
      expect((await store.ledger({ permutationId: killed })).filter((l) => l.kind === 'disk').map((l) => l.state)).toEqual(['created']);
      process.kill(victim.pid, 'SIGKILL');
      gate.open();
      const results = await Promise.all(ws.map((w) => w.done));
      const survivors = results.filter((r) => r.code !== null);
      expect(survivors).toHaveLength(2);
      for (const r of survivors) expect(r.code, r.stderr).toBe(0);
      const summaries = survivors.map((r) => lastJsonLine<{ takenOver: number }>(r.stdout));
      expect(summaries.reduce((n, s) => n + s.takenOver, 0)).toBe(1);

      expect((await store.permutations()).map((p) => p.status)).toEqual(Array(9).fill('done'));
      const records = await store.records();
      const keys = records.map(keyOf).sort();
      expect(keys).toEqual(cleanKeys);
      expect(new Set(keys).size).toBe(keys.length);
      expect(await store.leftovers()).toEqual([]);
      const journal = await store.journal();
      // the killed permutation was cleaned up from the ledger and redone
      expect(journal.some((j) => j.permutationId === killed && j.step === 'permutation' && j.event === 'redo')).toBe(true);
      const ledger = (await store.ledger({ permutationId: killed })).map((l) => l.state);
      expect(ledger.every((s) => s === 'removed' || s === 'absent'), ledger.join(',')).toBe(true);
      // the report renders from the store
      const md = renderMarkdown(buildReport(records, { runId }));
      expect(md).toContain(`# storsweep report — ${runId}`);
      for (const t of ['lab-vcenter', 'lab-vcenter-2', 'lab-vm0-b']) expect(md).toContain(`| ${t} |`);
    } finally {
      await backend.close();
    }
    const spans = diskSpans(await lab.sim.control.log());
    expect(overlapping(spans)).toEqual([]);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  });
});
