// `storsweep profiles` lists every preset with its tests, and the IOMeter spec grammar is in --help.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IOMETER_SPEC_HELP, profilesJson, profilesText } from '../../../src/cli/commands/profiles.ts';
import { iometerSpec } from '../../../src/workloads/iometer-spec.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';

const BIN = fileURLToPath(new URL('../../../bin/storsweep.mjs', import.meta.url));

describe('storsweep profiles', () => {
  it('lists each preset with its timing and tests: reference label, id, block, QD, threads, pattern', () => {
    const text = profilesText();
    for (const name of Object.keys(PROFILES)) expect(text.startsWith(`${name}: `) || text.includes(`\n${name}: `)).toBe(true);
    expect(text).toMatch(/^cdm8-default: CrystalDiskMark 8 default.*\n {2}1 unscored warm-up pass \+ 5 measured passes of 5 s, 5 s apart; score = max of the passes; 1 GiB test file, pre-filled\n {4}SEQ1M Q8T1 read +seq-1m-q8t1-read +1m +QD8 +T1 +read\n/);
    expect(text).toMatch(/\n {4}RND4K Q32T16 write +rnd-4k-q32t16-write +4k +QD32 +T16 +randwrite\n/);
    expect(text).toContain('quick: ');
    expect(text).toMatch(/\n {2}1 measured pass of 1 s, 0 s apart;/);
    expect(text.endsWith(`${IOMETER_SPEC_HELP}\n`)).toBe(true);
  });

  it('--json: the same presets and tests, each with its IOMeter spec, which reads back as the test', () => {
    const json = profilesJson() as Array<{ name: string; passes: number; warmupPass: boolean; tests: Array<{ id: string; label: string; iometer: string }> }>;
    expect(json.map((p) => p.name)).toEqual(Object.keys(PROFILES));
    const cdm8 = json.find((p) => p.name === 'cdm8-default')!;
    expect(cdm8.passes).toBe(5);
    expect(cdm8.warmupPass).toBe(true);
    expect(cdm8.tests[0]).toEqual({ id: 'seq-1m-q8t1-read', label: 'SEQ1M Q8T1 read', iometer: '1m 100% read 0% random q8 t1', pattern: 'read', blockSizeBytes: 1048576, queueDepth: 8, threads: 1, readPercent: 100 });
    for (const p of json) for (const t of p.tests) expect(iometerSpec(t.iometer).id).toBe(t.id);
  });

  it('documents the IOMeter grammar (q, t) in --help and in profiles --help', () => {
    for (const args of [['--help'], ['profiles', '--help']]) {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('"<size> <read>% read <random>% random [q<depth>] [t<workers>]"');
      expect(r.stdout).toContain('q<N>     outstanding I/Os per worker (queue depth)');
    }
  });
});
