// The diskspd fill's own throughput (workloads/prefill.ts runDiskspdFill): bytes diskspd wrote over
// the seconds it measured, summed over the fill passes — the first-write result a report shows.
import { describe, expect, it } from 'vitest';
import { runDiskspdFill } from '../../../src/workloads/prefill.ts';
import { PROFILES } from '../../../src/workloads/profiles.ts';

const MiB = 1024 * 1024;

function xml(bytes: number, seconds: number): string {
  return [
    '<Results><TimeSpan>',
    `<TestTimeSeconds>${seconds.toFixed(2)}</TestTimeSeconds><ThreadCount>1</ThreadCount>`,
    `<Thread><Id>0</Id><Target><Path>x</Path><BytesCount>${bytes}</BytesCount><IOCount>${bytes / MiB}</IOCount><ReadBytes>0</ReadBytes><ReadCount>0</ReadCount><WriteBytes>${bytes}</WriteBytes><WriteCount>${bytes / MiB}</WriteCount></Target></Thread>`,
    '</TimeSpan></Results>',
  ].join('\n');
}

describe('diskspd fill throughput', () => {
  it('is what diskspd wrote over its measured seconds, over every pass (not the wall clock, which holds start-up and the last pass\'s wrap)', async () => {
    const profile = { ...PROFILES['cdm8-default']!, fileSizeBytes: 1024 * MiB };
    const passes = [xml(600 * MiB, 10), xml(600 * MiB, 10)];
    let clock = 0;
    const out = await runDiskspdFill(profile, '#2', async () => passes.shift()!, () => (clock += 15_000));
    expect(out).toMatchObject({ filled: true, bytes: 1024 * MiB, passes: 2, seconds: 15 });
    expect(out.bytesPerSecond).toBeCloseTo((1200 * MiB) / 20, 6);
  });
});
