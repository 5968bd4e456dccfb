// What each CrystalDiskMark version passes diskspd, and how long its unscored pass lasts, as its
// source says (hiyohiyo/CrystalDiskMark DiskBench.cpp `DiskSpd()`):
//   7.0.0 (@8dbfdeb): `int duration = 5;` for every pass; `if (Affinity == 0) option += L" -n"; else
//     option += L" -ag";` with the setting's default AFFINITY_DISABLED = 0 → `-n`.
//   8.0.4 (@94d0d10): `option += L" -ag";` always; `if (j == 0) { duration = 5; … } else { duration =
//     m_MeasureTime; }` — pass 0 lasts 5 s whatever the measure time.
//   5.x/6.x: no affinity flag.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { diskspdArgs } from '../../../src/workloads/diskspd.ts';
import { runPasses } from '../../../src/workloads/passes.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';
import type { WorkloadProfile } from '../../../src/workloads/spec.ts';
import { workloadSec } from '../../../src/plan/estimate.ts';

const write = (p: WorkloadProfile) => p.tests.find((t) => t.readPercent === 0)!;

describe('diskspd affinity per CrystalDiskMark version', () => {
  it('cdm7-*: -n (affinity disabled, the 7.x default); cdm8-*: -ag; cdm5/cdm6/cdm3/quick: neither', () => {
    for (const [name, p] of Object.entries(PROFILES)) {
      for (const t of p.tests) {
        const args = diskspdArgs(t, p, { target: 'D:\\b.dat' });
        const flags = args.filter((a) => a === '-n' || a.startsWith('-a'));
        if (name.startsWith('cdm7-')) expect(flags, `${name} ${t.id}`).toEqual(['-n']);
        else if (name.startsWith('cdm8-')) expect(flags, `${name} ${t.id}`).toEqual(['-ag']);
        else expect(flags, `${name} ${t.id}`).toEqual([]);
      }
    }
  });

  it('a custom test that names its own affinity keeps it (no second flag)', () => {
    const p = PROFILES['cdm8-default']!;
    const t = { ...write(p), diskspdOptions: ['-n'] };
    expect(diskspdArgs(t, p, { target: 'E:' }).filter((a) => a === '-n' || a.startsWith('-a'))).toEqual(['-n']);
  });
});

describe('the unscored pass 0', () => {
  /** the runtime of every pass runPasses asks for, unscored first */
  async function passLengths(p: WorkloadProfile): Promise<number[]> {
    const seen: number[] = [];
    await runPasses(p.tests[0]!, p, async (_measured, pp) => {
      seen.push(pp.runtimeSec);
      return { raw: '', toolVersion: null, iops: 1, bytesPerSecond: 1, latencyUs: { mean: 1, p50: null, p95: null, p99: null, p999: null }, cpuPercent: null };
    });
    return seen;
  }

  it('cdm8: always 5 s, also when the measured passes are set to 10 s or 1 s', async () => {
    for (const runtimeSec of [5, 10, 1]) {
      const p = { ...PROFILES['cdm8-default']!, runtimeSec };
      expect(await passLengths(p)).toEqual([5, runtimeSec, runtimeSec, runtimeSec, runtimeSec, runtimeSec]);
    }
    expect(PROFILES['cdm8-default']!.description).toMatch(/unscored pass of 5 s/);
  });

  it('cdm7 (every pass 5 s in 7.0.0) and custom profiles: pass 0 as long as the others', async () => {
    expect(await passLengths({ ...PROFILES['cdm7-default']!, runtimeSec: 10 })).toEqual([10, 10, 10, 10, 10, 10]);
    expect(PROFILES['cdm7-default']!.warmupPassSec).toBeUndefined();
  });

  it('the estimate counts cdm8’s pass 0 at 5 s', () => {
    const p = { ...PROFILES['cdm8-demo']!, runtimeSec: 1, intervalSec: 0 };
    // 2 tests × (5 × 1 s + 5 s)
    expect(workloadSec(p, 1)).toBe(20);
  });
});

describe('shipped playbooks describe their preset’s timing as the preset has it', () => {
  it('"passes of N s" / "5 × N s" in a playbook’s comments is its profile’s pass length (vmfs-block-size: cdm3 passes last 6 s)', () => {
    const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../playbooks');
    let checked = 0;
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      const names = [...(/^\s+profile: \[([^\]]*)\]/m.exec(text)?.[1] ?? '').split(',')].map((s) => s.trim()).filter((n) => PROFILES[n]);
      if (names.length !== 1) continue;
      const p = PROFILES[names[0]!]!;
      const comments = text.split('\n').filter((l) => l.includes('#')).map((l) => l.slice(l.indexOf('#'))).join(' ');
      for (const m of comments.matchAll(/(?:passes of|\d ×) (\d+) s\b/g)) {
        expect(Number(m[1]), `${f}: "${m[0]}" (${p.name} passes last ${p.runtimeSec} s)`).toBe(p.runtimeSec);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});
