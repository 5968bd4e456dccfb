// Issue 28's acceptance: a provider with its own axis, one operation and its own endpoint section,
// added without editing a core file (test/fixtures/scratch-provider: its folder, and an example
// inventory; registerProvider stands for the registry line, a cast in name.ts for the name union).
// validate, plan, run --dry-run and a local run (fio on this machine) work with it; the run's mark
// files are checked on disk afterwards.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeldLock } from '../../src/app/run/prepare.ts';
import { ConfigError } from '../../src/errors.ts';
import { registerProvider } from '../../src/providers/index.ts';
import { scratch, STORES } from '../fixtures/scratch-provider/index.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

// Before anything reads the registry: the config layer builds the playbook and inventory schemas
// from it when it loads, so everything above config/ is imported after this line.
registerProvider(scratch);
const { jsonSchemaFor, planFor, validateConfig } = await import('../../src/app/config.ts');
const { prepareRun } = await import('../../src/app/run/prepare.ts');
const { executePrepared } = await import('../../src/app/run/execute.ts');

let dir: string;
let inventory: string;
let playbook: string;
const marksDir = () => path.join(dir, 'marks');

const write = (name: string, lines: string[]): string => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, lines.join('\n') + '\n');
  return f;
};

/** What a call refuses with, as `validate` prints each problem: `file:line:col: key: message`. */
async function refusal(fn: () => unknown): Promise<string[]> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map((d) => `${path.basename(d.file)}:${d.line}:${d.column}: ${d.path}: ${d.message}`);
    throw err;
  }
  throw new Error('not refused');
}

const quiet = { note: () => undefined, progressView: () => ({ onEvent: () => undefined, close: () => undefined }), onInterrupt: () => () => undefined, exitNow: () => undefined, keepGoingWhenOutputCloses: () => undefined };

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-scratch-'));
  fs.mkdirSync(path.join(dir, 'work'));
  fs.mkdirSync(marksDir());
  const example = fs.readFileSync(new URL('../fixtures/scratch-provider/example-scratch.yaml', import.meta.url), 'utf8');
  inventory = path.join(dir, 'inventory.yaml');
  fs.writeFileSync(inventory, example.replaceAll('{{dir}}', dir));
  playbook = write('scratch.yaml', [
    'name: scratch-study',
    'target: scratch-here',
    'matrix:',
    '  scratch:',
    '    flavor: [plain, salted]',
    '  workload:',
    '    profile: [one-read]',
    'workloads:',
    '  one-read:',
    '    fio: { rw: read, bs: 64k, iodepth: 1 }',
    ...quickSettings({ prefill: false }),
  ]);
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a provider registered by a test, with its own axis, operation and endpoint section', () => {
  it('validate takes its endpoint section, its target and its axis; the inventory JSON Schema has the section', async () => {
    expect(await validateConfig(playbook, { env: process.env, inventory: [inventory] })).toEqual({ set: [], inventory });
    const schema = jsonSchemaFor('inventory') as { properties: Record<string, { description?: string }> };
    expect(schema.properties[STORES]?.description).toBe('Directories the scratch provider writes marks to');
  });

  it('validate refuses a bad endpoint entry and a missing one at file:line:col, with the allowed values', async () => {
    const bad = write('bad-inventory.yaml', [
      `${STORES}:`,
      '  marks:',
      `    root: ${marksDir()}`,
      '    mode: fast',
      'targets:',
      '  scratch-here:',
      '    provider: scratch',
      '    store: elsewhere',
      `    workdir: ${dir}/work`,
    ]);
    expect(await refusal(() => validateConfig(undefined, { env: process.env, inventory: [bad] }))).toEqual(['bad-inventory.yaml:4:11: scratchStores.marks.mode: expected one of plain, sync; got "fast"']);
    // its secret field is resolved like any other: a reference to a variable that is not set is refused at its line
    const missing = write('missing-store.yaml', [`${STORES}:`, '  marks:', `    root: ${marksDir()}`, '    token: ${env:STORSWEEP_SCRATCH_UNSET}', 'targets:', '  scratch-here:', '    provider: scratch', '    store: elsewhere', `    workdir: ${dir}/work`]);
    expect(await refusal(() => validateConfig(undefined, { env: process.env, inventory: [missing] }))).toEqual([
      'missing-store.yaml:4:12: scratchStores.marks.token: secret ${env:STORSWEEP_SCRATCH_UNSET}: environment variable STORSWEEP_SCRATCH_UNSET is not set',
      'missing-store.yaml:8:12: targets.scratch-here.store: no scratchStores entry named "elsewhere" (have: marks)',
    ]);
  });

  it('validate refuses a value its axis does not take, at the value', async () => {
    const pb = write('bad-flavor.yaml', ['name: bad-flavor', 'target: scratch-here', 'matrix:', '  scratch:', '    flavor: [plain, peppered]', '  workload:', '    profile: [cdm8-default]']);
    const problems = await refusal(() => validateConfig(pb, { env: process.env, inventory: [inventory] }));
    expect(problems).toEqual(['bad-flavor.yaml:5:21: matrix.scratch.flavor[1]: expected one of plain, salted; got "peppered"']);
  });

  it('plan: one write-mark-file step per permutation, its arguments from the axis', () => {
    const plan = planFor(playbook, [inventory], 'rplan0000', [], process.env);
    expect(plan.permutations.map((p) => p.axes['scratch.flavor'])).toEqual(['plain', 'salted']);
    for (const p of plan.permutations) {
      const [mark, workload] = p.steps;
      expect(mark).toMatchObject({ provider: 'scratch', operation: 'write mark file', arguments: { flavor: p.axes['scratch.flavor'] }, creates: { kind: 'mark-file' } });
      expect(workload).toMatchObject({ provider: 'local', operation: 'fio' });
    }
  });

  it('run --dry-run: the calls it would send (each mark written, then its teardown), and nothing written', async () => {
    const out = path.join(dir, 'runs-dry');
    const r = await prepareRun(playbook, { env: process.env, inventory: [inventory], out, dryRun: true }, {}, () => undefined);
    if (r.kind !== 'dry-run') throw new Error('expected a dry run');
    const calls = r.dryRun.lines.map((l) => JSON.parse(l) as { provider: string; operation: string });
    expect(calls.filter((c) => c.provider === 'scratch').map((c) => c.operation)).toEqual(['write mark file', 'destroy', 'write mark file', 'destroy']);
    expect(fs.readdirSync(marksDir())).toEqual([]);
  });

  it('a local run: each mark file written, measured beside, and removed; --keep leaves the last one', async () => {
    const out = path.join(dir, 'runs');
    const o = { env: process.env, inventory: [inventory], out, keep: true, report: false };
    const held: HeldLock = {};
    const prepared = await prepareRun(playbook, o, held, () => undefined);
    if (prepared.kind !== 'prepared') throw new Error('expected a run');
    const plan = prepared.prep.plan;
    let outcome;
    try {
      outcome = await executePrepared(prepared.prep, o, quiet);
    } finally {
      held.lock?.release();
    }
    expect(outcome.summary.failed).toBe(0);
    const [first, last] = plan.permutations.map((p) => p.steps[0]!);
    // on disk: the first permutation's mark was removed by its teardown; the last one's is kept, holding its owned name
    expect(fs.readdirSync(marksDir())).toEqual([last!.arguments.file]);
    expect(fs.readFileSync(path.join(marksDir(), String(last!.arguments.file)), 'utf8')).toBe(`${last!.creates!.name} salted\n`);
    expect(fs.existsSync(path.join(marksDir(), String(first!.arguments.file)))).toBe(false);
    const db = new Database(path.join(outcome.runDir, 'run.sqlite'), { readonly: true });
    const ledger = db.prepare('SELECT provider, kind, name, state FROM ledger ORDER BY seq').all();
    const records = (db.prepare('SELECT record FROM results').all() as Array<{ record: string }>).map((r) => JSON.parse(r.record) as { axes: Record<string, unknown>; iops: number });
    db.close();
    expect(ledger).toEqual([
      { provider: 'scratch', kind: 'mark-file', name: first!.creates!.name, state: 'removed' },
      { provider: 'scratch', kind: 'mark-file', name: last!.creates!.name, state: 'kept' },
    ]);
    expect(records.map((r) => r.axes['scratch.flavor']).sort()).toEqual(['plain', 'salted']);
    for (const r of records) expect(r.iops).toBeGreaterThan(0);
  });
});
