// HTML chart labels are shown whole (a permutation label of listed targets runs to 60 characters),
// and a wide heatmap keeps a readable size (it scrolls in its box instead of shrinking its text).
import { describe, expect, it } from 'vitest';
import { barChart, heatmap } from '../../../src/report/charts.ts';

describe('chart labels', () => {
  it('a 60-character bar label is drawn whole, and the label column widens to hold it', () => {
    const label = 'target=lab-vcenter, format=rdm-physical, profile=rnd4k-q32';
    const svg = barChart({ title: 't', unit: 'IOPS', bars: [{ label, value: 10 }, { label: 'target=lab-guest', value: 12 }] });
    expect(svg).toContain(`>${label}</text>`);
    const width = Number(/viewBox="0 0 (\d+)/.exec(svg)![1]);
    expect(width).toBeGreaterThan(640);
  });

  it('a heatmap of many columns has a least width (it scrolls) and whole tick labels', () => {
    const xs = Array.from({ length: 16 }, (_, i) => `naa.6000c2900000${i}`);
    const svg = heatmap({ title: 't', unit: 'MB/s', xName: 'x', yName: 'y', xValues: xs, yValues: ['a', 'b'], cells: [xs.map(() => 1), xs.map(() => 2)], higherIsBetter: true });
    expect(svg).toMatch(/style="min-width:\d+px"/);
    for (const x of xs) expect(svg).toContain(`>${x}</text>`);
  });
});
