// Two targets in parallel, each pausing between its tests (settings.intervalSec) on the run's one
// AbortSignal, with real fio: the run ends without Node's MaxListenersExceededWarning ("Possible
// EventTarget memory leak detected. 11 abort listeners added to [AbortSignal]"), i.e. every wait and
// command takes its abort listener off again when it ends. Run with --trace-warnings so that a
// warning would carry its stack into stderr.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { quickSettings } from '../helpers/quick-settings.ts';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-abort-'));
  for (const w of ['w1', 'w2', 'runs']) fs.mkdirSync(path.join(dir, w));
  fs.writeFileSync(path.join(dir, 'inv.yaml'), ['targets:', `  a: { provider: local, workdir: ${path.join(dir, 'w1')} }`, `  b: { provider: local, workdir: ${path.join(dir, 'w2')} }`, ''].join('\n'));
  // CrystalDiskMark 8's default set: 8 tests per permutation, a pause between each two
  fs.writeFileSync(
    path.join(dir, 'pb.yaml'),
    ['name: listeners', 'target: [a, b]', 'matrix:', '  workload:', '    profile: [cdm8-default]', ...quickSettings({ intervalSec: 1, direct: false }), ''].join('\n'),
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('abort listeners on the run signal', () => {
  it('two targets in parallel, a pause between every two tests: no MaxListenersExceededWarning', async () => {
    const r = await runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, 'inv.yaml'), '--out', path.join(dir, 'runs'), '--no-report', '--json'], { nodeArgs: ['--trace-warnings'], timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    // the sweep did pause on the signal more than Node's limit of 10 times
    expect(r.stdout.trim().split('\n').at(-1)).toContain('"runDir"');
    const records = r.stderr.match(/rep 1: /g) ?? [];
    expect(records.length).toBeGreaterThanOrEqual(12);
    expect(r.stderr).not.toMatch(/MaxListenersExceededWarning|memory leak/);
  }, 300_000);
});
