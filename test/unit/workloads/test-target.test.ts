// A Linux test file or work directory is an absolute, normalised path outside /proc and /sys
// (workloads/test-target.ts): validate refuses the others at file:line:col, the fio builder refuses
// them too, and before measuring the guest is asked whether a "file" is in fact a device.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compose } from '../../../src/app/compose.ts';
import { loadInventory } from '../../../src/config/index.ts';
import { UnsafeOperation } from '../../../src/errors.ts';
import { fioFilenameArg } from '../../../src/workloads/tool-settings.ts';
import { linuxTestPathProblem } from '../../../src/workloads/test-target.ts';
import { fioEndpoint } from '../../../src/workloads/fio-endpoint.ts';
import { createLocalRunner } from '../../../src/ssh/local-runner.ts';
import type { CommandRunner } from '../../../src/ssh/command-runner.ts';
import { configErrorOf } from '../../helpers/config-errors.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-target-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const inventoryFile = (workdir: string, testFile?: string) => {
  const file = path.join(dir, 'inventory.yaml');
  const lines = ['targets:', '  here:', '    provider: local', `    workdir: '${workdir}'`];
  if (testFile !== undefined) lines.push(`    testFile: '${testFile}'`);
  fs.writeFileSync(file, [...lines, ''].join('\n'));
  return file;
};

const messageOf = (fn: () => unknown): string => configErrorOf(fn, '');

describe('Linux test paths', () => {
  it('refuses relative paths, . and .. segments, // and /proc, /sys at the line of the value', () => {
    const cases: Array<[string, RegExp]> = [
      ['../dev/sdz', /must be an absolute path/],
      ['dev/sdz', /must be an absolute path/],
      ['/proc/self/root/dev/sdz', /must not be under \/proc/],
      ['/sys/block/sdz', /must not be under \/sys/],
      ['/data/../dev/sdz', /must be a normalised path/],
      ['/data/./t.dat', /must be a normalised path/],
      ['/data//t.dat', /must be a normalised path/],
      ['/data/t.dat/', /must be a normalised path/],
    ];
    for (const [testFile, why] of cases) {
      const msg = messageOf(() => loadInventory(inventoryFile('/tmp/bench', testFile), {}));
      expect(msg, testFile).toMatch(/inventory\.yaml:5:15: targets\.here\.testFile: /);
      expect(msg, testFile).toMatch(why);
      expect(() => fioFilenameArg(testFile), testFile).toThrow(why);
    }
    expect(messageOf(() => loadInventory(inventoryFile('../bench'), {}))).toMatch(/inventory\.yaml:4:14: targets\.here\.workdir: must be an absolute path/);
  });

  it('takes absolute, normalised paths, devices included (the plan makes those destructive)', () => {
    for (const p of ['/tmp/bench/t.dat', '/dev/sdb', '/dev/disk/by-id/wwn-0x5000c500a1b2c3d4', '/dev/shm/t.dat', '/']) expect(linuxTestPathProblem(p), p).toBeNull();
    expect(messageOf(() => loadInventory(inventoryFile('/tmp/bench', '/dev/sdb'), {}))).toBe('');
  });

  it('before measuring, a test file that is a device on the guest (a link to /dev/null here) is refused', async () => {
    const link = path.join(dir, 'looks-like-a-file.dat');
    fs.symlinkSync('/dev/null', link);
    const inv = loadInventory(inventoryFile(dir, link), {});
    const refused = compose(inv.inventory.targets['here']!, inv).workload.connect();
    await expect(refused).rejects.toThrow(UnsafeOperation);
    await expect(refused).rejects.toThrow(/is a device on the guest/);
    const plain = loadInventory(inventoryFile(dir, path.join(dir, 'plain.dat')), {});
    const runner = await compose(plain.inventory.targets['here']!, plain).workload.connect();
    await runner.close();
  });

  it('the same at connect through a guest\'s shell (`mkdir -p`, `test -b || test -c`) and through this machine\'s file system calls', async () => {
    const link = path.join(dir, 'looks-like-a-file.dat');
    fs.symlinkSync('/dev/null', link);
    const local = createLocalRunner(process.env);
    // the local runner without its fs calls: what an SSH guest's runner does
    const shell: CommandRunner = { target: 'shell', run: (c, o) => local.run(c, o), close: async () => undefined };
    for (const [name, runner] of [['fs', local], ['shell', shell]] as const) {
      const workdir = path.join(dir, name, 'a', 'b');
      const endpoint = (testFile: string) => fioEndpoint({ workdir, testFile, fioPath: 'fio', ioengine: 'psync' }, async () => runner);
      await expect(endpoint(link).connect(), name).rejects.toThrow(/is a device on the guest/);
      expect(fs.statSync(workdir).isDirectory(), name).toBe(true);
      await expect(endpoint(path.join(workdir, 'plain.dat')).connect(), name).resolves.toBe(runner);
    }
  });
});
