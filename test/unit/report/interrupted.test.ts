// A report of a run stopped by Ctrl-C (or still running) says so: the run's permutations not
// measured to the end are counted from its store's statuses, and the answer is said to cover only
// what was measured.
import { describe, expect, it } from 'vitest';
import { runInfoOf, type PermutationRow, type RunMeta } from '../../../src/results/port.ts';
import { buildReport } from '../../../src/report/model.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { labRecords } from './helpers.ts';

const meta = { runId: 'r-int', playbook: 'p', playbookFile: '/p.yaml', inventoryFile: '/i.yaml', target: 't', startedAt: '2026-12-05T00:00:00Z', fingerprint: {} } as unknown as RunMeta;
const row = (id: string, status: PermutationRow['status']): PermutationRow => ({ permutationId: id, index: 0, axes: {}, status, reason: null, attempts: 0, completedRepetitions: 0 });

describe('a report after Ctrl-C', () => {
  it('says the run was interrupted, how much is missing and how to measure the rest', () => {
    const info = runInfoOf(meta, null, [row('a', 'done'), row('b', 'running'), row('c', 'pending'), row('d', 'pending')]);
    expect(info.unfinished).toEqual([{ runId: 'r-int', left: 3, total: 4 }]);
    const md = renderMarkdown(buildReport(labRecords({ runId: 'r-int' }), info));
    expect(md).toContain('Run r-int was interrupted (or is still running): 3 of 4 permutations not measured to the end; this report covers what was measured');
  });

  it('a finished run says nothing of it', () => {
    const info = runInfoOf(meta, null, [row('a', 'done'), row('b', 'failed')]);
    expect(info.unfinished).toBeUndefined();
    expect(renderMarkdown(buildReport(labRecords({ runId: 'r-int' }), info))).not.toContain('interrupted');
  });
});
