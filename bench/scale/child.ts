// One phase of the scale benchmark, run in its own process (under /usr/bin/time -v) so its peak
// RSS is its own: `child.ts plan|store|markdown|html <dir>`. Prints one JSON line {phase, ms, …};
// `ms` times the operation only, not Node's and tsx's start-up (which RSS does include).
// Each phase imports only the modules it uses: the report phases do not load the config schemas,
// the planner and the vSphere step planner (~30 MB of RSS a report never needs).
import fs from 'node:fs';
import path from 'node:path';
import type { ResultRecord } from '../../src/results/record.ts';
import type { RunMeta } from '../../src/results/store.ts';

const [phase, dir] = process.argv.slice(2) as [string, string];
const runDir = path.join(dir, 'run');

const TARGET = { vcenter: { url: 'https://vc.example/sdk', username: 'u', password: 'p' }, host: 'esx1', vm: 'bench-vm', datastore: 'ds1', vmfsDevice: 'naa.600a', rdmDevice: 'naa.600b', allowedDevices: ['naa.600a', 'naa.600b'], nfs: { remoteHost: 'nas', remotePath: '/export', vaaiNas: true } };
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * 4 datastore kinds × 2 disk formats × 4 controllers × 1562 sizes × 2 workloads = 99,968 (the planner's limit is 100,000)
 * permutations. (vmfs3 is out: since the VMFS3 file-size rule, 1 MiB blocks refuse disks above
 * 256 GiB, and the planner rightly refuses most of these sizes on it.)
 */
/** The planning modules, imported (before any timing) by the phases that plan. */
async function planning() {
  const { playbookSchema } = await import('../../src/config/playbook.ts');
  const { buildPlan } = await import('../../src/plan/plan.ts');
  const { planVsphereSteps } = await import('../../src/providers/vsphere/steps.ts');
  return { playbookSchema, buildPlan, planVsphereSteps };
}

function plan100k({ playbookSchema, buildPlan, planVsphereSteps }: Awaited<ReturnType<typeof planning>>) {
  const pb = playbookSchema.parse({
    name: 'scale-plan',
    target: 'vc',
    matrix: {
      datastore: { kind: ['vmfs5', 'vmfs6', 'nfs', 'existing'] },
      disk: { format: ['thin', 'eagerzeroedthick'], controller: ['pvscsi', 'lsilogic', 'lsisas', 'buslogic'], sizeGb: range(1562) },
      workload: { profile: ['cdm8-default', 'cdm8-peak'] },
    },
  });
  return buildPlan(pb, 'vc', { runId: 'rscale', provider: 'vsphere', planSteps: (axes, names) => planVsphereSteps(axes, TARGET, names) });
}

/** 4 kinds × 5 formats × 625 sizes = 12,500 permutations of cdm8-default (8 tests) = 100,000 records. */
function storePlan({ playbookSchema, buildPlan }: Awaited<ReturnType<typeof planning>>) {
  const pb = playbookSchema.parse({
    name: 'scale-store',
    target: 'vc',
    matrix: {
      datastore: { kind: ['vmfs5', 'vmfs6', 'nfs', 'existing'] },
      disk: { format: ['thin', 'lazyzeroedthick', 'eagerzeroedthick', 'rdm-physical', 'rdm-virtual'], sizeGb: range(625) },
      workload: { profile: ['cdm8-default'] },
    },
  });
  return buildPlan(pb, 'vc', { runId: 'rscale', provider: 'vsphere' });
}

function out(v: Record<string, unknown>): void {
  console.log(JSON.stringify({ phase, ...v }));
}

if (phase === 'plan') {
  const modules = await planning();
  const t0 = performance.now();
  const plan = plan100k(modules);
  const ms = performance.now() - t0;
  const t1 = performance.now();
  // As the run stores it (src/results/store.ts): the header once, each permutation on its own row.
  let jsonLength = JSON.stringify({ ...plan, permutations: [] }).length;
  for (const p of plan.permutations) jsonLength += JSON.stringify(p).length;
  out({ ms, permutations: plan.permutations.length, steps: plan.permutations.reduce((a, p) => a + p.steps.length, 0), serializeMs: performance.now() - t1, jsonBytes: jsonLength });
} else if (phase === 'store' || phase === 'store-live') {
  // store: a bulk load (import, benchmark): every record in one addRepetitions transaction.
  // store-live: as the executor does in a sweep, one addRepetition transaction (and fsync) per
  // repetition; in its own directory so that the report phases read the bulk-loaded store.
  const { ResultStore } = await import('../../src/results/store.ts');
  const plan = storePlan(await planning());
  const dbDir = phase === 'store' ? runDir : path.join(dir, 'run-live');
  fs.rmSync(dbDir, { recursive: true, force: true });
  const meta: RunMeta = { runId: plan.runId, playbook: plan.playbook, playbookFile: 'scale.yaml', inventoryFile: 'inv.yaml', target: 'vc', startedAt: new Date().toISOString(), fingerprint: {}, insecureEndpoints: [] };
  const t0 = performance.now();
  const store = ResultStore.create(dbDir, meta, plan);
  const createMs = performance.now() - t0;
  const tests = plan.profiles['cdm8-default']!.tests;
  let n = 0;
  let seed = 1;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const recordsOf = (p: (typeof plan.permutations)[number]): ResultRecord[] =>
    tests.map((t) => {
      const iops = 1000 + rnd() * 100000;
      return {
        runId: plan.runId,
        permutationId: p.permutationId,
        axes: p.axes,
        repetition: 1,
        test: { id: t.id, pattern: t.pattern, blockSizeBytes: t.blockSizeBytes, queueDepth: t.queueDepth, threads: t.threads, readPercent: t.readPercent },
        iops,
        bytesPerSecond: iops * t.blockSizeBytes,
        latencyUs: { mean: 100 + rnd() * 500, p50: 90, p95: 400, p99: 800, p999: 1500 },
        cpuPercent: 5 + rnd() * 20,
        tool: { name: 'fio', version: 'fio-3.33' },
        rawPath: `raw/${p.permutationId}/rep1/${t.id}.pass1.json`,
        metadata: { profile: 'cdm8-default', passes: 5, aggregate: 'max' },
      };
    });
  let transactions = 0;
  if (phase === 'store') {
    const batch = plan.permutations.map((p) => ({ permutationId: p.permutationId, repetition: 1, records: recordsOf(p) }));
    for (const b of batch) n += b.records.length;
    store.addRepetitions(batch);
    transactions = 1;
  } else {
    for (const p of plan.permutations) {
      const records = recordsOf(p);
      store.addRepetition(p.permutationId, 1, records);
      n += records.length;
      transactions++;
    }
  }
  const ms = performance.now() - t0;
  store.close();
  out({ ms, createMs, records: n, transactions, dbBytes: fs.statSync(path.join(dbDir, 'run.sqlite')).size });
} else if (phase === 'markdown' || phase === 'html') {
  // As `storsweep report` reads a run: each record handed from the store to the report's columns
  // as it is read (report/model.ts ReportRecords), never the 100,000 records at once.
  const { buildReport, ReportRecords } = await import('../../src/report/model.ts');
  const { renderHtml } = await import('../../src/report/html.ts');
  const { renderMarkdown } = await import('../../src/report/markdown.ts');
  const { openResults } = await import('../../src/results/store.ts');
  const t0 = performance.now();
  const r = openResults(runDir);
  const info = r.runInfo();
  const records = new ReportRecords();
  r.eachRecord((rec) => records.add(rec));
  r.close();
  const loadMs = performance.now() - t0;
  const report = buildReport(records, { runId: info.runId, ...(info.playbook ? { playbook: info.playbook } : {}) });
  const text = phase === 'markdown' ? renderMarkdown(report) : renderHtml(report);
  fs.writeFileSync(path.join(dir, phase === 'markdown' ? 'report.md' : 'report.html'), text);
  out({ ms: performance.now() - t0, loadMs, records: records.recordCount, bytes: text.length });
} else {
  throw new Error(`unknown phase ${phase}`);
}
