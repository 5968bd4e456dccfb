// Load-independent figures of the orchestration benchmark's disk cycle (bench/orchestration.ts),
// for work on the client: SOAP calls per cycle (the harness's counter), calls the cycle waited
// for (its critical path), the client's CPU per cycle (process.cpuUsage around the cycles), and
// — with --pyvmomi — an A/B of wall times interleaved with pyvmomi in the same harness, in
// rounds, so a load change hits both sides alike.
//
//   node bin/run-ts.mjs bench/orchestration/cycle-profile.ts [--cycles N] [--rounds R] [--pyvmomi]
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bin/run-ts.mjs bench/orchestration/cycle-profile.ts
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startVcsim } from '../../src/lab/vcsim.ts';
import { VsphereClient, type MoRef } from '../../src/providers/vsphere/client.ts';

const VM = 'DC0_H0_VM0';
const DATASTORE = 'LocalDS_0';
const SIZE_MB = 16;
const HERE = path.dirname(new URL(import.meta.url).pathname);

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};

async function cycle(client: VsphereClient, vm: MoRef, tag: string): Promise<void> {
  const thin = await client.createDisk(vm, { datastore: DATASTORE, fileName: `${tag}-thin.vmdk`, sizeBytes: SIZE_MB * 2 ** 20, format: 'thin' });
  const eager = await client.createDisk(vm, { datastore: DATASTORE, fileName: `${tag}-eager.vmdk`, sizeBytes: SIZE_MB * 2 ** 20, format: 'eagerzeroedthick' });
  await client.detachDisk(vm, thin.key, { deleteFile: true });
  await client.detachDisk(vm, eager.key, { deleteFile: true });
}

function py(req: object): Promise<{ cycleMs: number[] }> {
  return new Promise((resolve, reject) => {
    const p = execFile('/usr/bin/python3', [path.join(HERE, 'pyvmomi_cycles.py')], { maxBuffer: 16 << 20, timeout: 600_000 }, (err, out, errOut) => {
      if (err) reject(new Error(`${err.message}\n${errOut}`));
      else resolve(JSON.parse(out) as { cycleMs: number[] });
    });
    p.stdin?.end(JSON.stringify(req));
  });
}

const cycles = arg('cycles', 20);
const rounds = arg('rounds', 1);
const withPy = process.argv.includes('--pyvmomi');
const sim = await startVcsim({ dataDir: path.join(os.tmpdir(), `cycle-profile-${process.pid}`) });
try {
  const client = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
  const vm = await client.findVm(VM);
  const prefix = `prof${process.pid}`;
  for (let i = 0; i < 3; i++) await cycle(client, vm, `${prefix}-warm-${i}`);
  const ts: number[] = [];
  const pyMs: number[] = [];
  let cpuUs = 0;
  let calls: Record<string, number> = {};
  let waited = 0;
  // the calls a cycle waits for: counted at the client, below the session (replays included)
  const inner = client.session.roundTrip.bind(client.session);
  let cycleRunning = false;
  client.session.roundTrip = (method, thisRef, params) => {
    const p = inner(method, thisRef, params);
    if (!cycleRunning || method === 'WaitForUpdatesEx' || method === 'DestroyPropertyFilter') return p;
    waited++;
    return p;
  };
  for (let r = 0; r < rounds; r++) {
    await sim.control.reset();
    const c0 = process.cpuUsage();
    cycleRunning = true;
    for (let i = 0; i < cycles; i++) {
      const t0 = performance.now();
      await cycle(client, vm, `${prefix}-${r}-${i}`);
      ts.push(performance.now() - t0);
    }
    cycleRunning = false;
    const c = process.cpuUsage(c0);
    cpuUs += c.user + c.system;
    for (const [k, v] of Object.entries(await sim.control.calls())) calls[k] = (calls[k] ?? 0) + v;
    if (withPy) {
      const res = await py({ url: sim.url, username: sim.username, password: sim.password, certFile: sim.certFile, vm: VM, datastore: DATASTORE, sizeMb: SIZE_MB, prefix: `${prefix}-py-${r}`, cycles });
      pyMs.push(...res.cycleMs);
    }
  }
  const n = cycles * rounds;
  calls = Object.fromEntries(Object.entries(calls).sort((a, b) => b[1] - a[1]));
  const total = Object.values(calls).reduce((a, b) => a + b, 0);
  console.log(
    JSON.stringify(
      {
        cycles: n,
        callsPerCycle: total / n,
        callsByMethod: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, v / n])),
        // the calls a cycle waits for (WaitForUpdatesEx answers in parallel with a CreateFilter or
        // ModifyListView, which count as waited for; DestroyPropertyFilter is not waited for)
        waitedCallsPerCycle: waited / n,
        clientCpuMsPerCycle: cpuUs / 1000 / n,
        storsweepMedianMs: median(ts),
        ...(withPy ? { pyvmomiMedianMs: median(pyMs), ratio: median(ts) / median(pyMs) } : {}),
        loadavg: os.loadavg()[0],
      },
      null,
      1,
    ),
  );
  await client.logout();
} finally {
  await sim.stop();
}
