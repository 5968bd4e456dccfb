// The pass loop every tool shares: an optional unscored warm-up pass (CrystalDiskMark's pass 0), N measured passes, then the
// profile's aggregation rule. The tool-specific part is one function that runs one pass.
import { aggregatePasses } from './aggregate.ts';
import type { Metadata, OnRaw, PassMeasurement, ScoredSpan, TestOutcome, WorkloadProfile, WorkloadTest } from '../contract/workload.ts';
import { aggregateHalves } from './half-passes.ts';

export type { Metadata, OnRaw, ScoredSpan, TestOutcome } from '../contract/workload.ts';

export interface PassResult extends PassMeasurement {
  raw: string;
  toolVersion: string | null;
  /** facts about how this pass was measured (the latency span…), kept in the record's metadata */
  metadata?: Metadata;
}

/** The profile one pass runs with: the unscored pass takes its own length when the tool fixes one (warmupPassSec). */
export function passProfile(profile: WorkloadProfile, measured: boolean): WorkloadProfile {
  return !measured && profile.warmupPassSec !== undefined ? { ...profile, runtimeSec: profile.warmupPassSec } : profile;
}

export async function runPasses(test: WorkloadTest, profile: WorkloadProfile, onePass: (measured: boolean, passProfile: WorkloadProfile) => Promise<PassResult>, onRaw?: OnRaw, scored?: ScoredSpan): Promise<TestOutcome> {
  if (profile.warmupPass) await onePass(false, passProfile(profile, false));
  await scored?.start();
  const measured: PassMeasurement[] = [];
  const rawPaths: (string | null)[] = [];
  const metas: (Metadata | undefined)[] = [];
  let version: string | null = null;
  for (let pass = 1; pass <= profile.passes; pass++) {
    if (pass > 1) await scored?.pass?.(pass);
    const r = await onePass(true, profile);
    rawPaths.push(onRaw ? await onRaw(test, pass, r.raw) : null);
    version = r.toolVersion;
    metas.push(r.metadata);
    measured.push({ iops: r.iops, bytesPerSecond: r.bytesPerSecond, latencyUs: r.latencyUs, cpuPercent: r.cpuPercent, ...(r.latencyHistogram ? { latencyHistogram: r.latencyHistogram } : {}) });
  }
  await scored?.end();
  const agg = aggregatePasses(measured, profile.aggregate);
  // a mixed job's halves aggregated as its total is (half-passes.ts), not one pass's beside a mean
  const metadata: Metadata = { ...metas[agg.representativePass], ...aggregateHalves(metas, profile.aggregate), ...(profile.warmupPass ? { warmupPass: true } : {}) };
  return { ...agg, test, toolVersion: version, rawPath: rawPaths[agg.representativePass] ?? null, passes: profile.passes, ...(Object.keys(metadata).length > 0 ? { metadata } : {}) };
}
