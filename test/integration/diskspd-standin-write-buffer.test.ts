// The diskspd stand-in takes exactly the -Z forms diskspd documents and refuses the rest with
// diskspd's words (CmdLineParser.cpp `case 'Z'`, `_GetSizeInBytes`; Common.cpp: a buffer smaller than
// the block): `-Z`, `-Zr`, `-Z<size>[,<file>]` with K/M/G/T or b (blocks) in either case, more than 0
// bytes. The stand-in itself runs (python3), as the lab runs it.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { WINDOWS_HARNESS_DIR } from '../../src/lab/harness/windows/state.ts';

/** Each argv through the stand-in's parse and check: its write buffer, or its error text. */
function parsed(argvs: string[][]): Array<{ ok: unknown } | { error: string }> {
  const script = [
    'import json, sys',
    'import diskspd_standin as d',
    'out = []',
    'for argv in json.loads(sys.stdin.read()):',
    '    try:',
    '        o, t = d.parse(argv); d.check(o); out.append({"ok": o.get("#Z")})',
    '    except d.DiskspdError as e:',
    '        out.append({"error": str(e)})',
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script], { cwd: WINDOWS_HARNESS_DIR, input: JSON.stringify(argvs), encoding: 'utf8' })) as Array<{ ok: unknown } | { error: string }>;
}

describe('diskspd stand-in: -Z write buffers', () => {
  it('accepts the documented forms', () => {
    const forms = ['-Z', '-Zr', '-Z4K', '-Z4k', '-Z1G', '-Z1t', '-Z8b', '-Z4096', '-Z1M,'];
    expect(parsed(forms.map((z) => ['-b4K', '-w100', z, 'D:\\t.dat']))).toEqual([
      { ok: 'zero' }, { ok: 'random-per-io' }, { ok: ['random', 4096, ''] }, { ok: ['random', 4096, ''] }, { ok: ['random', 1024 ** 3, ''] },
      { ok: ['random', 1024 ** 4, ''] }, { ok: ['random', 8 * 4096, ''] }, { ok: ['random', 4096, ''] }, { ok: ['random', 1024 ** 2, ''] },
    ]);
  });

  it('a b suffix counts blocks of the -b given before it (64K before any)', () => {
    expect(parsed([['-Z2b', '-b4K', 'D:\\t.dat']])).toEqual([{ ok: ['random', 2 * 65536, ''] }]);
  });

  it('refuses malformed sizes, 0 bytes and a buffer smaller than the block, as diskspd words it', () => {
    const bad = parsed([['-b4K', '-Z0', 'x'], ['-b4K', '-Zr5', 'x'], ['-b4K', '-Zx', 'x'], ['-b4K', '-Z4X', 'x'], ['-b4K', '-Z4KB', 'x'], ['-b1M', '-Z4K', 'x']]);
    expect(bad).toEqual([
      { error: "ERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Z0'" },
      { error: "Invalid integer\nERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Zr5'" },
      { error: "Invalid integer\nERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Zx'" },
      { error: "Invalid size 'X'. Valid: K - KiB, M - MiB, G - GiB, T - TiB, B - block\nERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Z4X'" },
      { error: "Unrecognized characters after size specification\nERROR: invalid size passed to -Z\nERROR: incorrectly provided option: '-Z4KB'" },
      { error: 'ERROR: custom write buffer (-Z) is smaller than the block size. Write buffer size: 4096 block size: 1048576' },
    ]);
  });
});
