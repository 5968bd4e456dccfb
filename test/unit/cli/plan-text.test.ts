// What `plan` prints about each workload's timing (warm-up, passes, interval, pre-fill and the
// throughput its estimate assumes), and that `plan --json` carries the same facts.
import { describe, expect, it } from 'vitest';
import { renderPlanText } from '../../../src/app/plan-text.ts';
import { jsonText } from '../../../src/cli/output.ts';
import { playbookSchema } from '../../../src/config/playbook.ts';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { buildPlan } from '../../../src/plan/plan.ts';

const plan = (over: Record<string, unknown>, tool: 'fio' | 'diskspd' = 'fio') =>
  buildPlan(playbookSchema.parse({ name: 't', target: 'x', matrix: { workload: { profile: ['cdm8-default', '4k 100% read 100% random'] } }, ...over }), 'x', { runId: 'r1', provider: 'local', workloadTool: tool });

describe('plan: each workload\'s timing, as the estimate counts it', () => {
  it('the presets\' warm-up, none for an IOMeter spec, and the pre-fill at the assumed throughput', () => {
    const lines = renderPlanText(plan({})).split('\n');
    expect(lines.slice(0, 4)).toEqual([
      'playbook t → target x (local): 2 permutations, estimated 5m 22s',
      '    workloads:',
      '      cdm8-default: 8 tests, each 1 unscored warm-up pass + 5 measured passes of 5 s, 5 s between tests; pre-fill 1 GiB once per permutation, ~0m 11s at 100 MB/s (assumed; settings.prefillMBps sets it)',
      '      4k 100% read 100% random: 1 test: 5 measured passes of 5 s, no warm-up pass; pre-fill 1 GiB once per permutation, ~0m 11s at 100 MB/s (assumed; settings.prefillMBps sets it)',
    ]);
  });

  it('the playbook\'s throughput and warm-up; diskspd fills in whole 10 s passes; no pre-fill when it is off', () => {
    const text = renderPlanText(plan({ settings: { prefillMBps: 2000, warmupPass: true, fileSize: '64m', runtimeSec: 1, passes: 1, intervalSec: 0 } }, 'diskspd'));
    expect(text).toContain('      4k 100% read 100% random: 1 test: 1 unscored warm-up pass + 1 measured pass of 1 s; pre-fill 64 MiB once per permutation, ~0m 10s at 2000 MB/s (settings.prefillMBps)\n');
    const fio = renderPlanText(plan({ settings: { prefillMBps: 2000, fileSize: '64m' } }));
    expect(fio).toContain('pre-fill 64 MiB once per permutation, under 1 s at 2000 MB/s (settings.prefillMBps)');
    expect(renderPlanText(plan({ settings: { prefill: false } }))).toContain('      cdm8-default: 8 tests, each 1 unscored warm-up pass + 5 measured passes of 5 s, 5 s between tests; no pre-fill (settings.prefill: false)\n');
  });

  it('plan --json: warmupPass per profile and per workload step, and the estimate\'s basis', () => {
    const json = JSON.parse(jsonText(plan({}))) as RunPlan;
    expect(Object.fromEntries(Object.entries(json.profiles).map(([k, p]) => [k, p.warmupPass]))).toEqual({ 'cdm8-default': true, '4k 100% read 100% random': false });
    expect(json.permutations.map((p) => (p.steps.at(-1)!.arguments as { warmupPass: boolean }).warmupPass)).toEqual([true, false]);
    expect(json.estimateBasis).toEqual({ prefillMBps: 100, prefillMBpsFrom: 'assumed' });
    // cdm8-default: 8 × 6 × 5 s + 7 × 5 s + 10.7 s fill; the IOMeter spec: 5 × 5 s + 10.7 s
    expect(json.permutations.map((p) => p.estimateSec)).toEqual([Math.round(275 + 10.737), Math.round(25 + 10.737)]);
  });
});
