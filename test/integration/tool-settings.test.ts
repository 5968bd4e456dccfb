// The inventory's fio settings are allow-listed like the playbook's: `ioengine: external:/x.so`
// (fio dlopen()s the library, as whoever fio runs as) is refused by `validate` and `run` at its
// line, and fio is never started. A wrapper named fio records every invocation, and a control run
// with an allowed engine proves the wrapper is really what the target runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';

const ALLOWED = 'libaio, io_uring, psync, sync, pvsync, pvsync2, vsync, posixaio, windowsaio, mmap, null';
let dir: string;
let calls: string;
let playbook: string;
const inventory = (ioengine: string, testFile?: string) => {
  const file = path.join(dir, `inv-${ioengine.replace(/\W/g, '_')}${testFile ? '-file' : ''}.yaml`);
  fs.writeFileSync(
    file,
    ['targets:', '  t:', '    provider: local', `    workdir: ${path.join(dir, 'scratch')}`, `    fioPath: ${path.join(dir, 'bin', 'fio')}`, `    ioengine: "${ioengine}"`, ...(testFile ? [`    testFile: "${testFile}"`] : []), ''].join('\n'),
  );
  return file;
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-tools-'));
  calls = path.join(dir, 'fio-calls.log');
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'scratch'));
  fs.writeFileSync(path.join(dir, 'bin', 'fio'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\nexec /usr/bin/fio "$@"\n`, { mode: 0o755 });
  playbook = path.join(dir, 'pb.yaml');
  fs.writeFileSync(
    playbook,
    ['name: tools', 'target: t', 'matrix:', '  workload:', '    profile: ["4k 100% read 100% random"]', 'settings:', '  fileSize: 4m', '  runtimeSec: 1', '  passes: 1', '  warmupPass: false', '  intervalSec: 0', 'repeat: 1', ''].join('\n'),
  );
});

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('inventory ioengine allow-list', () => {
  it('validate and run refuse ioengine external:… at file:line:col with the allowed engines; fio never runs', async () => {
    const inv = inventory('external:/tmp/evil.so');
    const expected = `${inv}:6:15: targets.t.ioengine: expected one of ${ALLOWED}; got "external:/tmp/evil.so"\n`;
    const v = await runCli(['validate', playbook, '-i', inv]);
    expect(v.code).toBe(2);
    expect(v.stderr).toBe(expected);
    const runs = path.join(dir, 'runs-evil');
    const r = await runCli(['run', playbook, '-i', inv, '--out', runs, '--no-report']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(expected);
    expect(stackTraceLines(v.stderr + r.stderr)).toEqual([]);
    expect(fs.existsSync(calls), 'fio was started').toBe(false);
    expect(fs.existsSync(runs) ? fs.readdirSync(runs) : []).toEqual([]);
  });

  it('control: an allowed engine reaches the same fio wrapper', async () => {
    const r = await runCli(['run', playbook, '-i', inventory('psync'), '--out', path.join(dir, 'runs-ok'), '--no-report']);
    expect(r.stderr).not.toMatch(/FAILED/);
    expect(r.code).toBe(0);
    const lines = fs.readFileSync(calls, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.includes('--ioengine=psync')).length).toBeGreaterThan(0);
    expect(lines.join('\n')).not.toContain('external');
  });
});

describe('the inventory test file is one file', () => {
  it("a ':' in testFile does not make fio write a second file (fio splits --filename at ':')", async () => {
    const victim = path.join(dir, 'victim.dat');
    fs.writeFileSync(victim, 'precious\n');
    const testFile = `${path.join(dir, 'scratch', 't.dat')}:${victim}`;
    // --keep: the test file, removed at teardown otherwise, stays to be measured here
    const r = await runCli(['run', playbook, '-i', inventory('psync', testFile), '--out', path.join(dir, 'runs-colon'), '--no-report', '--keep']);
    expect(r.stderr).not.toMatch(/FAILED/);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    // fio wrote exactly the named file (a directory "t.dat:" under scratch holds it)
    expect(fs.statSync(testFile).size).toBe(4 * 1024 * 1024);
  });
});
