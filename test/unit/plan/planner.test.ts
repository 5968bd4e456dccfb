// The planner is pure: the same playbook gives the same permutations, ids and order everywhere.
import { describe, expect, it } from 'vitest';
import { playbookSchema, type Playbook } from '../../../src/config/playbook.ts';
import { estimatePermutationSec, workloadSec } from '../../../src/plan/estimate.ts';
import { axesKey, cartesian, expandMatrix, shuffle } from '../../../src/plan/matrix.ts';
import { countPermutations } from '../../../src/config/matrix-size.ts';
import type { AxisDef } from '../../../src/contract/plan.ts';
import { newRunId, OWNED_NAME, ownedPrefix, permutationId } from '../../../src/plan/permutation.ts';
import { buildPlan, resolveProfiles } from '../../../src/plan/plan.ts';
import type { PlannedStep } from '../../../src/contract/provider.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';

const pb = (over: Record<string, unknown>): Playbook => playbookSchema.parse({ name: 't', target: 'lab-local', matrix: { workload: { profile: ['quick'] } }, ...over });

const AXES: AxisDef[] = [
  { name: 'datastore.kind', values: ['vmfs5', 'vmfs6'] },
  { name: 'disk.format', values: ['thin', 'lazyzeroedthick', 'eagerzeroedthick'] },
  { name: 'workload.profile', values: ['quick'] },
];

describe('matrix expansion', () => {
  it('is the cartesian product, in playbook order (last axis varies fastest)', () => {
    const perms = cartesian(AXES);
    expect(perms).toHaveLength(6);
    expect(perms.map((p) => `${p['datastore.kind']}/${p['disk.format']}`)).toEqual([
      'vmfs5/thin',
      'vmfs5/lazyzeroedthick',
      'vmfs5/eagerzeroedthick',
      'vmfs6/thin',
      'vmfs6/lazyzeroedthick',
      'vmfs6/eagerzeroedthick',
    ]);
    expect(cartesian([])).toEqual([{}]);
  });

  it('exclude drops every permutation matching all keys of a rule; values compare as text (YAML 1 vs "1")', () => {
    const perms = expandMatrix(AXES, { exclude: [{ 'datastore.kind': 'vmfs5', 'disk.format': 'thin' }, { 'disk.format': 'eagerzeroedthick' }] });
    expect(perms.map((p) => `${p['datastore.kind']}/${p['disk.format']}`)).toEqual(['vmfs5/lazyzeroedthick', 'vmfs6/thin', 'vmfs6/lazyzeroedthick']);
    const numeric = expandMatrix([{ name: 'datastore.blockSizeMb', values: [1, 2, 4, 8] }], { exclude: [{ 'datastore.blockSizeMb': '2' }] });
    expect(numeric.map((p) => p['datastore.blockSizeMb'])).toEqual([1, 4, 8]);
  });

  it('include adds a permutation (missing axes take their first value) unless it already exists', () => {
    const perms = expandMatrix(AXES, {
      exclude: [{ 'datastore.kind': 'vmfs6' }],
      include: [{ 'datastore.kind': 'vmfs6', 'disk.format': 'thin' }, { 'datastore.kind': 'vmfs5', 'disk.format': 'thin' }, { 'datastore.kind': 'vmfs3' }],
    });
    expect(perms).toHaveLength(5);
    expect(perms[3]).toEqual({ 'datastore.kind': 'vmfs6', 'disk.format': 'thin', 'workload.profile': 'quick' });
    expect(perms[4]).toEqual({ 'datastore.kind': 'vmfs3', 'disk.format': 'thin', 'workload.profile': 'quick' });
  });

  it('a playbook counts: axes product × repeat, with exclude and include applied', () => {
    const plan = buildPlan(
      pb({
        matrix: { disk: { format: ['thin', 'eagerzeroedthick'], sizeGb: [10, 20, 40] }, workload: { profile: ['quick', 'cdm8-default'] } },
        exclude: [{ 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 40 }],
        include: [{ 'disk.format': 'thin', 'disk.sizeGb': 80 }],
        repeat: 3,
      }),
      'lab-local',
      { runId: 'rtest', provider: 'local' },
    );
    // 2 × 3 × 2 = 12, minus 2 excluded (both profiles), plus 1 included
    expect(plan.permutations).toHaveLength(11);
    expect(plan.permutations.every((p) => p.repetitions === 3)).toBe(true);
    expect(plan.permutations.map((p) => p.index)).toEqual([...Array(11).keys()]);
    expect(plan.permutations.filter((p) => p.axes['disk.sizeGb'] === 40 && p.axes['disk.format'] === 'eagerzeroedthick')).toHaveLength(0);
    expect(plan.permutations.at(-1)!.axes).toEqual({ 'disk.format': 'thin', 'disk.sizeGb': 80, 'workload.profile': 'quick' });
    expect(plan.axes.map((a) => a.name)).toEqual(['disk.format', 'disk.sizeGb', 'workload.profile']);
    // the plan is data: it survives a JSON round trip unchanged
    expect(JSON.parse(JSON.stringify(plan))).toEqual(plan);
  });
});

describe('stable permutation ids', () => {
  it('depend on the axes only: same axes → same id, whatever the key order or run', () => {
    const a = permutationId({ 'disk.format': 'thin', 'datastore.kind': 'vmfs6', 'workload.profile': 'quick' });
    const b = permutationId({ 'workload.profile': 'quick', 'datastore.kind': 'vmfs6', 'disk.format': 'thin' });
    expect(a).toBe(b);
    expect(a).toMatch(/^p[0-9a-f]{12}$/);
    expect(axesKey({ b: 1, a: 2 })).toBe(axesKey({ a: 2, b: 1 }));
  });

  it('are pinned: a change of the hashing would orphan every stored run (resume, compare)', () => {
    expect(permutationId({ 'workload.profile': 'cdm8-default' })).toBe('p577ca69eed2a');
  });

  it('differ for different values, including a typed 1 vs "1"', () => {
    const ids = new Set([permutationId({ x: 1 }), permutationId({ x: '1' }), permutationId({ x: 2 }), permutationId({ y: 1 })]);
    expect(ids.size).toBe(4);
  });

  it('are the same in two plans of the same playbook with different run ids; owned names carry both', () => {
    const book = pb({ matrix: { disk: { format: ['thin', 'lazyzeroedthick'] }, workload: { profile: ['quick'] } } });
    const one = buildPlan(book, 'x', { runId: newRunId(), provider: 'local' });
    const two = buildPlan(book, 'x', { runId: newRunId(), provider: 'local' });
    expect(one.runId).not.toBe(two.runId);
    expect(one.permutations.map((p) => p.permutationId)).toEqual(two.permutations.map((p) => p.permutationId));
    expect(ownedPrefix(one.runId, one.permutations[0]!.permutationId)).toMatch(OWNED_NAME);
  });

  it('100,000 permutations get 100,000 distinct ids', () => {
    const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    const profiles = Object.keys(PROFILES).slice(0, 10);
    expect(profiles).toHaveLength(10);
    const plan = buildPlan(pb({ matrix: { disk: { format: ['thin'], sizeGb: range(100) }, volume: { sizeGb: range(100) }, workload: { profile: profiles } } }), 'x', {
      runId: 'rbig',
      provider: 'local',
    });
    expect(plan.permutations).toHaveLength(100_000);
    expect(new Set(plan.permutations.map((p) => p.permutationId)).size).toBe(100_000);
  });
});

describe('seeded shuffle', () => {
  const items = Array.from({ length: 50 }, (_, i) => i);

  it('is reproducible for a seed, different for another, and a permutation of the input', () => {
    const a = shuffle(items, 42);
    expect(shuffle(items, 42)).toEqual(a);
    expect(a).not.toEqual(items);
    expect([...a].sort((x, y) => x - y)).toEqual(items);
    expect(shuffle(items, 43)).not.toEqual(a);
    expect(items[0]).toBe(0); // input untouched
  });

  it('order.randomize reorders the plan reproducibly; ids follow their axes, indexes follow run order', () => {
    const matrix = { volume: { sizeGb: [1, 2, 3, 4, 5, 6, 7, 8] }, workload: { profile: ['quick'] } };
    const plain = buildPlan(pb({ matrix }), 'x', { runId: 'r1', provider: 'local' });
    const s1 = buildPlan(pb({ matrix, order: { randomize: true, seed: 7 } }), 'x', { runId: 'r1', provider: 'local' });
    const s1again = buildPlan(pb({ matrix, order: { randomize: true, seed: 7 } }), 'x', { runId: 'r2', provider: 'local' });
    const s2 = buildPlan(pb({ matrix, order: { randomize: true, seed: 8 } }), 'x', { runId: 'r1', provider: 'local' });
    const ids = (p: typeof plain) => p.permutations.map((x) => x.permutationId);
    expect(ids(s1)).toEqual(ids(s1again));
    expect(ids(s1)).not.toEqual(ids(plain));
    expect(ids(s2)).not.toEqual(ids(s1));
    expect([...ids(s1)].sort()).toEqual([...ids(plain)].sort());
    expect(s1.permutations.map((p) => p.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('estimate', () => {
  it('workload time = repetitions × (tests × (passes + warm-up) × (runtime + ramp) + intervals between tests)', () => {
    const book = pb({ matrix: { workload: { profile: ['cdm8-default'] } }, settings: { runtimeSec: 2, rampSec: 1, passes: 3, warmupPass: true, intervalSec: 4 }, repeat: 2 });
    const profile = resolveProfiles(book)['cdm8-default']!;
    expect(profile.tests).toHaveLength(8);
    // per repetition: 8 × (3 × (2 + 1) + (5 + 1)) = 120 (CrystalDiskMark 8's pass 0 lasts 5 s whatever
    // the measure time), plus 7 intervals × 4 = 28 → 148; × 2
    expect(workloadSec(profile, 2)).toBe(296);
    const plan = buildPlan(book, 'x', { runId: 'r', provider: 'local' });
    // plus the pre-fill, once per permutation: 1 GiB at the assumed 100 MB/s = 10.7 s
    expect(plan.permutations[0]!.estimateSec).toBe(Math.round(296 + 1024 ** 3 / 100e6));
    expect(plan.totalEstimateSec).toBe(307);
    expect(plan.estimateBasis).toEqual({ prefillMBps: 100, prefillMBpsFrom: 'assumed' });
  });

  it('the pre-fill: the region at settings.prefillMBps (or an assumed 100 MB/s), once per permutation whatever the repetitions; fio writes it once, diskspd in whole 10 s passes; none when prefill is off', () => {
    const book = (settings: Record<string, unknown>, repeat = 1) => pb({ matrix: { workload: { profile: ['quick'] } }, settings: { fileSize: '2g', ...settings }, repeat });
    const est = (b: Playbook, operation = 'fio') => {
      const profile = resolveProfiles(b).quick!;
      const steps: PlannedStep[] = [{ step: 'workload', provider: 'local', operation, arguments: {}, destructive: false }];
      return estimatePermutationSec(profile, b.repeat.max, steps, {}, b.settings?.prefillMBps) - workloadSec(profile, b.repeat.max);
    };
    const twoGiB = 2 * 1024 ** 3;
    expect(est(book({}))).toBe(Math.round(twoGiB / 100e6)); // 21 s
    expect(est(book({}, 5))).toBe(Math.round(twoGiB / 100e6)); // not × repetitions
    expect(est(book({ prefillMBps: 1000 }))).toBe(Math.round(twoGiB / 1000e6)); // 2 s
    expect(est(book({ prefillMBps: 1000 }), 'diskspd')).toBe(10); // one 10 s fill pass covers it
    expect(est(book({ prefillMBps: 50 }), 'diskspd')).toBe(50); // 42.9 s of writing → 5 passes
    expect(est(book({ prefill: false, prefillMBps: 1 }))).toBe(0);
    const plan = buildPlan(book({ prefillMBps: 1000 }), 'x', { runId: 'r', provider: 'local' });
    expect(plan.estimateBasis).toEqual({ prefillMBps: 1000, prefillMBpsFrom: 'settings.prefillMBps' });
    expect(plan.totalEstimateSec).toBe(8 + 2);
  });

  it('settings.prefillMBps is checked at validate: 1 to 100000 MB/s', () => {
    expect(() => pb({ settings: { prefillMBps: 0 } })).toThrow(/expected MB\/s from 1 to 100000/);
    expect(() => pb({ settings: { prefillMBps: 1e6 } })).toThrow(/MB\/s/);
  });

  it('adds each provider per-step figures and eager zeroing by size (each operation estimates its own step)', () => {
    const book = pb({ matrix: { workload: { profile: ['quick'] } }, repeat: 1 });
    const profile = resolveProfiles(book).quick!;
    const base = workloadSec(profile, 1);
    expect(base).toBe(8); // the quick preset: 8 tests, one 1 s pass each, no intervals
    const step = (operation: string, args: Record<string, unknown> = {}): PlannedStep => ({ step: 'x', provider: 'vsphere', operation, arguments: args, destructive: false });
    const disk = (format: string) => step('ReconfigVM_Task', { deviceChange: 'add+create', backing: 'flat', format, sizeGb: 10, sizeBytes: 10 * 1024 ** 3 });
    const steps = (format: string) => [step('CreateVmfsDatastore'), step('something-else'), disk(format), { ...step('fio'), step: 'workload' }];
    const fill = (16 * 1024 ** 2) / 100e6; // the quick preset's 16 MiB at the assumed 100 MB/s
    expect(estimatePermutationSec(profile, 1, steps('thin'), { 'disk.format': 'thin', 'disk.sizeGb': 10 })).toBe(Math.round(base + 15 + 5 + 5 + fill));
    // 10 GiB at 500 MB/s = 21.47 s of zeroing
    expect(estimatePermutationSec(profile, 1, steps('eagerzeroedthick'), { 'disk.format': 'eagerzeroedthick', 'disk.sizeGb': 10 })).toBe(Math.round(base + 25 + (10 * 1024 ** 3) / 500e6 + fill));
  });

  it('settings override the preset timing; the preset itself is untouched', () => {
    const p = resolveProfiles(pb({ matrix: { workload: { profile: ['cdm8-default'] } }, settings: { fileSize: '8m', runtimeSec: 1, passes: 1 } }))['cdm8-default']!;
    expect(p).toMatchObject({ fileSizeBytes: 8 * 1024 * 1024, runtimeSec: 1, passes: 1, warmupPass: true, intervalSec: 5 });
    expect(PROFILES['cdm8-default']!.runtimeSec).toBe(5);
  });
});

describe('targets', () => {
  const matrix = { datastore: { kind: ['vmfs6'] }, disk: { format: ['thin', 'eagerzeroedthick'] }, workload: { profile: ['quick'] } };
  const steps = (label: string) => (): PlannedStep[] => [{ step: 'datastore', provider: 'vsphere', operation: `create on ${label}`, arguments: {}, destructive: true }];

  it('one target adds no axis: ids are those of every earlier plan', () => {
    const plan = buildPlan(pb({ matrix }), 'lab-local', { runId: 'r1', provider: 'local' });
    expect(plan.axes.map((a) => a.name)).toEqual(['datastore.kind', 'disk.format', 'workload.profile']);
    expect(plan.permutations.map((p) => p.permutationId)).toEqual(['p07142bdfe930', 'p0936b709845c']);
    expect(plan.target).toBe('lab-local');
    expect(plan.targets).toBeUndefined();
  });

  it('a list of targets is the first axis; each permutation gets its own target\'s steps and its own id', () => {
    const book = pb({ matrix, target: ['east', 'west'] });
    const plan = buildPlan(book, book.target, {
      runId: 'r1',
      provider: 'vsphere',
      targets: { east: { provider: 'vsphere', planSteps: steps('east') }, west: { provider: 'vsphere', planSteps: steps('west'), workloadTarget: { runsOn: 'ssh:west' } } },
    });
    expect(plan.axes[0]).toEqual({ name: 'target', values: ['east', 'west'] });
    expect(plan.targets).toEqual([{ name: 'east', provider: 'vsphere' }, { name: 'west', provider: 'vsphere' }]);
    expect(plan.permutations.map((p) => `${p.axes.target}/${p.axes['disk.format']}: ${p.steps[0]!.operation}`)).toEqual([
      'east/thin: create on east',
      'east/eagerzeroedthick: create on east',
      'west/thin: create on west',
      'west/eagerzeroedthick: create on west',
    ]);
    expect(new Set(plan.permutations.map((p) => p.permutationId)).size).toBe(4);
    expect(plan.permutations[2]!.steps.at(-1)!.arguments).toMatchObject({ runsOn: 'ssh:west' });
  });

  it('a list of targets must be distinct and non-empty', () => {
    expect(playbookSchema.safeParse({ name: 't', target: [], matrix }).success).toBe(false);
    expect(playbookSchema.safeParse({ name: 't', target: ['a', 'a'], matrix }).success).toBe(false);
  });
});

describe('countPermutations: the count without expanding', () => {
  const axes: AxisDef[] = [
    { name: 'target', values: ['a', 'b', 'c'] },
    { name: 'disk.format', values: ['thin', 'lazyzeroedthick'] },
    { name: 'disk.sizeGb', values: [1, 2, 4, 8] },
    { name: 'workload.profile', values: ['cdm8-default', 'cdm3'] },
  ];
  const cases: Array<{ exclude?: Array<Record<string, string | number>>; include?: Array<Record<string, string | number>> }> = [
    {},
    { exclude: [{ 'disk.format': 'thin' }] },
    { exclude: [{ 'disk.format': 'thin' }, { target: 'b' }, { 'disk.sizeGb': 4, target: 'b' }] },
    { exclude: [{ 'disk.format': 'thin' }, { 'disk.format': 'thin' }, { 'disk.sizeGb': '8' }, { 'disk.sizeGb': 16 }, { 'no.axis': 1 }] },
    { exclude: [{ target: 'a', 'disk.format': 'thin' }, { target: 'a', 'workload.profile': 'cdm3' }, { 'disk.sizeGb': 1, 'workload.profile': 'cdm3' }] },
    { exclude: [{ target: 'c' }], include: [{ target: 'c', 'disk.format': 'thin', 'disk.sizeGb': 1, 'workload.profile': 'cdm3' }] },
  ];
  it.each(cases.map((c, i) => [i, c] as const))('case %i: equals expandMatrix when nothing is included, bounds it otherwise', (_i, rules) => {
    const expanded = expandMatrix(axes, rules).length;
    const counted = countPermutations(axes, rules);
    if (rules.include) expect(counted >= BigInt(expanded)).toBe(true);
    else expect(counted).toBe(BigInt(expanded));
  });

  it('exact beyond 2^64, without expanding', () => {
    const big = Array.from({ length: 7 }, (_, i) => ({ name: `a${i}`, values: Array.from({ length: 1000 }, (_, j) => j) }));
    expect(countPermutations(big)).toBe(10n ** 21n);
    expect(countPermutations(big, { exclude: [{ a0: 0 }] })).toBe(10n ** 21n - 10n ** 18n);
  });
});

describe('the workload step says how CrystalDiskMark would run it', () => {
  it('cdm5 and cdm8: every read test before every write test, an unscored pass 0, and a pre-fill (settings.prefill: false turns it off)', () => {
    const plan = buildPlan(pb({ matrix: { workload: { profile: ['cdm5', 'cdm8-default'] } } }), 'lab-local', { runId: 'r1', provider: 'local' });
    for (const perm of plan.permutations) {
      const args = perm.steps.at(-1)!.arguments as { tests: string[]; warmupPass: boolean; prefill: boolean };
      const firstWrite = args.tests.findIndex((t) => t.endsWith('-write'));
      expect(firstWrite, perm.workload).toBe(4);
      expect(args.tests.slice(0, 4).every((t) => t.endsWith('-read')), perm.workload).toBe(true);
      expect(args, perm.workload).toMatchObject({ warmupPass: true, prefill: true });
      expect(plan.profiles[perm.workload]).toMatchObject({ warmupPass: true, prefill: true });
    }
    const off = buildPlan(pb({ matrix: { workload: { profile: ['cdm5'] } }, settings: { prefill: false } }), 'lab-local', { runId: 'r1', provider: 'local' });
    expect(off.permutations[0]!.steps.at(-1)!.arguments).toMatchObject({ prefill: false });
  });

  it('warm-up is CrystalDiskMark\'s: an IOMeter spec and a custom workload (even on a cdm8 base) have none unless settings.warmupPass: true; the plan says so', () => {
    const book = (settings?: Record<string, unknown>) =>
      pb({ matrix: { workload: { profile: ['cdm8-default', '4k 100% read 100% random', 'mine'] } }, workloads: { mine: { base: 'cdm8-default', fio: { rw: 'randread', bs: '8k' } } }, ...(settings ? { settings } : {}) });
    const warm = (plan: ReturnType<typeof buildPlan>) =>
      Object.fromEntries(plan.permutations.map((p) => [p.workload, [plan.profiles[p.workload]!.warmupPass, (p.steps.at(-1)!.arguments as { warmupPass: boolean }).warmupPass]]));
    expect(warm(buildPlan(book(), 'lab-local', { runId: 'r1', provider: 'local' }))).toEqual({
      'cdm8-default': [true, true],
      '4k 100% read 100% random': [false, false],
      mine: [false, false],
    });
    expect(warm(buildPlan(book({ warmupPass: true }), 'lab-local', { runId: 'r1', provider: 'local' }))).toEqual({
      'cdm8-default': [true, true],
      '4k 100% read 100% random': [true, true],
      mine: [true, true],
    });
    // the estimate counts what runs: one pass fewer per test without the warm-up (5 s each)
    const plan = buildPlan(book(), 'lab-local', { runId: 'r1', provider: 'local' });
    const [, iometer] = plan.permutations;
    expect(workloadSec(plan.profiles[iometer!.workload]!, 1)).toBe(5 * 5);
  });
});
