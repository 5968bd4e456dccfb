// A sweep that fails the same way stops (issue 29): five permutations on a local target whose fio is
// missing fail at the workload with one cause; the run stops after three, keeps its journal for
// --resume (two pending), says what repeated, and still writes its report with the failures first.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permutationStatuses, runDirOf } from '../helpers/vsphere-lab.ts';
import { runCli } from '../helpers/cli.ts';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-samefail-'));
  await fs.mkdir(path.join(dir, 'work'));
  await fs.writeFile(path.join(dir, 'inv.yaml'), ['targets:', '  here:', '    provider: local', `    workdir: ${path.join(dir, 'work')}`, '    fioPath: /nonexistent/fio', ''].join('\n'));
  const profiles = [4, 8, 16, 32, 64].map((k) => `"${k}k 100% read 100% random"`).join(', ');
  await fs.writeFile(path.join(dir, 'pb.yaml'), ['name: same-failure', 'target: here', 'matrix:', `  workload: {profile: [${profiles}]}`, 'settings: {fileSize: 1m, runtimeSec: 1, passes: 1, warmupPass: false, intervalSec: 0}', ''].join('\n'));
});
afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('every permutation failing on the same cause', () => {
  it('stops after three, keeps the rest pending for --resume, says what repeated, and writes its report with the failures first', async () => {
    const r = await runCli(['run', path.join(dir, 'pb.yaml'), '-i', path.join(dir, 'inv.yaml'), '-o', path.join(dir, 'runs'), '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('stopping: step "workload" failed the same way on 3 permutations in a row');
    expect(r.stderr).toContain('/nonexistent/fio');
    const runDir = runDirOf(r);
    expect(permutationStatuses(runDir).map((p) => p.status).sort()).toEqual(['failed', 'failed', 'failed', 'pending', 'pending']);
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    const firstFailure = md.indexOf('failed: local: fio');
    expect(firstFailure).toBeGreaterThan(0);
    expect(firstFailure).toBeLessThan(md.indexOf('## Run'));
    await fs.access(path.join(runDir, 'report.html'));
  });

  it('with settings.stopAfterSameFailure: 0 every permutation is tried', async () => {
    const pb = (await fs.readFile(path.join(dir, 'pb.yaml'), 'utf8')).replace('intervalSec: 0}', 'intervalSec: 0, stopAfterSameFailure: 0}');
    await fs.writeFile(path.join(dir, 'pb0.yaml'), pb);
    const r = await runCli(['run', path.join(dir, 'pb0.yaml'), '-i', path.join(dir, 'inv.yaml'), '-o', path.join(dir, 'runs0'), '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(permutationStatuses(runDirOf(r)).map((p) => p.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
  });
});
