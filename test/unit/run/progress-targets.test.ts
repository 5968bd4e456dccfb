// Progress lines a user reads once: a target waiting for another names both (it leads the line,
// the other is in the text); two axes that end alike are shown by their whole names.
import { describe, expect, it } from 'vitest';
import { axesLabel, createProgressView } from '../../../src/run/progress.ts';

function fakeStream() {
  const writes: string[] = [];
  return { writes, stream: { columns: 200, isTTY: false, write: (s: string) => (writes.push(s), true) } as unknown as NodeJS.WriteStream };
}

describe('progress lines name their target', () => {
  it('the waiting line starts with the waiting target, before its permutation started, and names the other', () => {
    const { writes, stream } = fakeStream();
    const view = createProgressView(stream, { live: false });
    view.onEvent({ type: 'message', level: 'info', text: 'waits for lab-guest to finish its permutation (both use guest test file /x on this machine)', permutationId: 'pb', target: 'lab-vcenter' });
    expect(writes.join('')).toMatch(/^\d\d:\d\d:\d\d lab-vcenter: waits for lab-guest to finish its permutation \(both use guest test file \/x on this machine\)\n$/);
  });
});

describe('axesLabel', () => {
  it('keeps short names, and whole names where two axes end alike', () => {
    expect(axesLabel({ 'disk.format': 'thin', 'disk.sizeGb': 8, 'volume.sizeGb': 1000, 'workload.profile': 'q' })).toBe('format=thin disk.sizeGb=8 volume.sizeGb=1000 profile=q');
    expect(axesLabel({ 'disk.sizeGb': 8, target: 't' }, { withoutTarget: true })).toBe('sizeGb=8');
  });
});
