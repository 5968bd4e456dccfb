// One diskspd test as measured passes (warm-up, passes, aggregation: passes.ts), next to run-fio.ts:
// each pass runs diskspd once (`runOnce`, e.g. inside a Hyper-V VM through PowerShell Direct) and
// its XML report is parsed here.
import { ParseError } from '../errors.ts';
import { LATENCY_SPAN } from '../results/record.ts';
import { halfFacts, isMixed } from '../results/mix-halves.ts';
import { parseDiskspdXml } from './diskspd.ts';
import { runPasses, type OnRaw, type ScoredSpan, type TestOutcome } from './passes.ts';
import type { WorkloadProfile, WorkloadTest } from './spec.ts';

/**
 * `where` names the host/VM in messages; `runOnce` returns one run's XML report (diskspd -Rxml) for
 * the profile of that pass (the unscored pass may have its own length: WorkloadProfile.warmupPassSec).
 */
export function runDiskspdTest(where: string, test: WorkloadTest, profile: WorkloadProfile, runOnce: (passProfile: WorkloadProfile) => Promise<string>, onRaw: OnRaw, scored?: ScoredSpan): Promise<TestOutcome> {
  return runPasses(
    test,
    profile,
    async (_measured, p) => {
      const raw = await runOnce(p);
      const parsed = parseDiskspdXml(raw, `${where} diskspd ${test.id}`);
      const span = parsed.timeSpans[0];
      if (!span) throw new ParseError(`${where}: diskspd printed no result for ${test.id}`, { source: where });
      return { raw, toolVersion: parsed.version, iops: span.total.iops, bytesPerSecond: span.total.bytesPerSecond, latencyUs: span.total.latencyUs, cpuPercent: span.cpuPercent, metadata: { latencySpan: LATENCY_SPAN, ...(isMixed(test) ? halfFacts(span.read, span.write) : {}) } };
    },
    onRaw,
    scored,
  );
}
