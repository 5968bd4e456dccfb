// writeFileAtomic (src/results/raw.ts) writes every file of a run directory and `report -o`:
// a name planted next to the target must never be written through.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../../../src/results/raw.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-atomic-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('never writes through a symlink planted at a temporary name (the old name was .<name>.<pid>.tmp)', () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious\n');
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    // every pid a process of this test could have, and the names a guess at a random suffix might take
    for (const pid of [process.pid, process.pid + 1, process.pid - 1]) fs.symlinkSync(victim, path.join(out, `.r2.md.${pid}.tmp`));
    writeFileAtomic(path.join(out, 'r2.md'), 'report\n');
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(fs.readFileSync(path.join(out, 'r2.md'), 'utf8')).toBe('report\n');
    // only the planted links and the file are left: no temporary file of ours
    expect(fs.readdirSync(out).filter((n) => !n.startsWith('.r2.md.') || !fs.lstatSync(path.join(out, n)).isSymbolicLink()).sort()).toEqual(['r2.md']);
  });

  it('replaces a symlink at the target instead of following it', () => {
    const victim = path.join(dir, 'victim.txt');
    fs.writeFileSync(victim, 'precious\n');
    fs.symlinkSync(victim, path.join(dir, 'r.md'));
    writeFileAtomic(path.join(dir, 'r.md'), 'report\n');
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(fs.lstatSync(path.join(dir, 'r.md')).isFile()).toBe(true);
  });

  it('creates its temporary file exclusively (O_EXCL) with a name no one can predict', () => {
    const opened: Array<[string, unknown]> = [];
    const real = fs.openSync;
    vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
      opened.push([String(p), flags]);
      return real(p, flags ?? 'r', mode);
    }) as typeof fs.openSync);
    writeFileAtomic(path.join(dir, 'a.json'), '{}');
    writeFileAtomic(path.join(dir, 'a.json'), '{}');
    const tmps = opened.filter(([p]) => p.endsWith('.tmp'));
    expect(tmps).toHaveLength(2);
    for (const [p, flags] of tmps) {
      expect(flags).toBe('wx');
      expect(path.dirname(p)).toBe(dir);
      expect(path.basename(p)).toMatch(/^\.a\.json\.[0-9a-f]{16}\.tmp$/);
    }
    expect(tmps[0]![0]).not.toBe(tmps[1]![0]);
  });

  it('a failed write (a full disk) removes its temporary file and leaves the old file whole', () => {
    const file = path.join(dir, 'results.jsonl');
    fs.writeFileSync(file, 'old\n');
    vi.spyOn(fs, 'writeSync').mockImplementation(() => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    });
    expect(() => writeFileAtomic(file, 'new\n')).toThrow(/ENOSPC/);
    vi.restoreAllMocks();
    expect(fs.readFileSync(file, 'utf8')).toBe('old\n');
    expect(fs.readdirSync(dir)).toEqual(['results.jsonl']);
  });
});
