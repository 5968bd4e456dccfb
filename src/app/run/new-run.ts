// A new run: planned from its playbook and inventory, with what it records about itself.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { loadInventory, loadPlaybook, type LoadedInventory, type LoadedPlaybook } from '../../config/index.ts';
import { runEnvironment } from '../../config/run-environment.ts';
import { overrideTexts, parseSetArguments } from '../../config/overrides.ts';
import type { Replication, RunPlan } from '../../contract/plan.ts';
import type { Env } from '../../contract/provider.ts';
import { UsageError } from '../../errors.ts';
import { readInputFile } from '../../input/read-input.ts';
import { checkPlaybookAgainst } from '../../plan/check.ts';
import { createEndpointPool, type EndpointPool } from '../../providers/endpoint-pool.ts';
import { newRunId } from '../../plan/permutation.ts';
import type { RunMeta } from '../../results/store.ts';
import { VERSION } from '../../version.ts';
import { composeTargets, measurementFacts, planRun, type Composition } from '../compose.ts';

// through the one bounded reader: a path swapped for a device or FIFO after it was parsed is refused
export const sha256 = (file: string) => createHash('sha256').update(readInputFile(file, 'config')).digest('hex');

export function runDirFor(out: string, plan: RunPlan): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return path.resolve(out, `${stamp}-${plan.playbook}-${plan.runId}`);
}

/** What planning a new run takes besides its playbook. */
export interface NewRunOptions {
  /** `-i`, repeatable: later files add or replace targets and endpoints (config/inventory-layers.ts) */
  inventory?: string | readonly string[];
  /** `--set key=value` overrides of playbook values (config/overrides.ts) */
  set?: string[];
  /** the environment as the CLI read it (`${env:…}` secrets, govc's GOVC_*): decision 0088 */
  env: Env;
}

/** `pool`: the endpoint sessions the compositions share; the caller closes it on every exit path. */
export function prepareNew(playbookFile: string, o: NewRunOptions, pool: EndpointPool = createEndpointPool()): { plan: RunPlan; comps: Map<string, Composition>; inv: LoadedInventory; pb: LoadedPlaybook; pbText: string; timeouts: RunMeta['timeouts'] } {
  if (!o.inventory?.length) throw new UsageError('run: -i/--inventory <file> is required');
  const overrides = parseSetArguments(o.set);
  const pb = loadPlaybook(playbookFile, overrides);
  const inv = loadInventory(o.inventory, o.env);
  const targets = checkPlaybookAgainst(pb, inv);
  const comps = composeTargets([...targets.keys()], inv, inv.file, pool);
  const plan = planRun(pb.playbook, comps, newRunId(), overrideTexts(overrides));
  return { plan, comps, inv, pb, pbText: pb.text, timeouts: pb.playbook.timeouts };
}

/** What a new run records about itself (run.sqlite's meta; a PostgreSQL run's too: `submit`). */
export function newRunMeta(a: { plan: RunPlan; comps: Map<string, Composition>; inv: LoadedInventory; pb: LoadedPlaybook; playbookFile: string; timeouts: RunMeta['timeouts']; confirmedDestroy: string[] }): RunMeta {
  const { plan, comps, inv, pb, playbookFile, timeouts, confirmedDestroy } = a;
  const environment = runEnvironment(pb.playbook, inv.inventory, [...comps.keys()]);
  return {
    runId: plan.runId,
    playbook: plan.playbook,
    playbookFile: path.resolve(playbookFile),
    inventoryFile: path.resolve(inv.file),
    ...((inv.files?.length ?? 1) > 1 ? { inventoryFiles: inv.files!.map((f) => path.resolve(f)) } : {}),
    target: plan.target,
    ...(plan.targets ? { targets: plan.targets.map((t) => t.name) } : {}),
    startedAt: new Date().toISOString(),
    fingerprint: { storsweep: VERSION, node: process.version, provider: plan.provider, target: plan.target },
    // what the playbook states about the setup, shown in reports beside the fingerprint
    ...(environment ? { environment } : {}),
    insecureEndpoints: [...new Set([...comps.values()].flatMap((c) => c.insecureEndpoints))],
    ...(timeouts ? { timeouts } : {}),
    config: { playbookSha256: sha256(playbookFile), facts: measurementFacts([...comps.keys()], inv, plan) },
    // what the user confirmed (exactly what the plan destroys): resume relies on it
    confirmedDestroy,
    // what the report says a repetition is a sample of (and which permutations reached repeat.until)
    ...(plan.replication ? { replication: replicationMeta(plan.replication) } : {}),
  };
}

function replicationMeta(r: Replication): NonNullable<RunMeta['replication']> {
  return { unit: r.unit, order: r.order, seed: r.seed, min: r.min, max: r.max, until: r.until };
}
