// The pass loop every tool shares: an optional unscored warm-up pass (CrystalDiskMark's pass 0), N measured passes, then the
// profile's aggregation rule. The tool-specific part is one function that runs one pass.
import { aggregatePasses, type Aggregated, type PassMeasurement } from './aggregate.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';

export type Metadata = Record<string, string | number | boolean | null>;

export interface PassResult extends PassMeasurement {
  raw: string;
  toolVersion: string | null;
  /** facts about how this pass was measured (the latency span…), kept in the record's metadata */
  metadata?: Metadata;
}

export interface TestOutcome extends Aggregated {
  test: WorkloadTest;
  toolVersion: string | null;
  /** what onRaw returned for the representative pass (its stored path) */
  rawPath: string | null;
  passes: number;
  /** the representative pass's metadata, plus `warmupPass` when an unscored pass ran first */
  metadata?: Metadata;
}

export type OnRaw = (test: WorkloadTest, pass: number, raw: string) => Promise<string | null>;

/**
 * The span of a test's scored passes, marked for whoever watches it from outside (the host's
 * latency counters, run/executor.ts): `start` right before the first measured pass (after the
 * unscored pass 0), `end` right after the last. The tool's own start between scored passes lies
 * inside it; pass 0, the fill and the pause between tests do not.
 */
export interface ScoredSpan {
  start(): Promise<void>;
  end(): Promise<void>;
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
    const r = await onePass(true, profile);
    rawPaths.push(onRaw ? await onRaw(test, pass, r.raw) : null);
    version = r.toolVersion;
    metas.push(r.metadata);
    measured.push({ iops: r.iops, bytesPerSecond: r.bytesPerSecond, latencyUs: r.latencyUs, cpuPercent: r.cpuPercent });
  }
  await scored?.end();
  const agg = aggregatePasses(measured, profile.aggregate);
  const metadata: Metadata = { ...metas[agg.representativePass], ...(profile.warmupPass ? { warmupPass: true } : {}) };
  return { ...agg, test, toolVersion: version, rawPath: rawPaths[agg.representativePass] ?? null, passes: profile.passes, ...(Object.keys(metadata).length > 0 ? { metadata } : {}) };
}
