import { describe, expect, it } from 'vitest';
import { failureCause, SameFailureTracker } from '../../../src/run/same-failure.ts';

describe('the same-failure rule', () => {
  it('stops at the Nth failure of one step with one cause in a row, naming what repeated', () => {
    const t = new SameFailureTracker(3);
    expect(t.failed('disk', 'vmkfstools -c failed: not enough space (13) on ss-rabc123-p0123456789ab-ds')).toBeNull();
    expect(t.failed('disk', 'vmkfstools -c failed: not enough space (13) on ss-rabc123-pfedcba987654-ds')).toBeNull();
    const stop = t.failed('disk', 'vmkfstools -c failed: not enough space (13) on ss-rabc123-p111111111111-ds');
    expect(stop).toContain('step "disk" failed the same way on 3 permutations in a row');
    expect(stop).toContain('not enough space');
  });

  it('starts again after a success, another step or another cause', () => {
    const t = new SameFailureTracker(2);
    expect(t.failed('disk', 'a')).toBeNull();
    t.ok();
    expect(t.failed('disk', 'a')).toBeNull();
    expect(t.failed('workload', 'a')).toBeNull();
    expect(t.failed('workload', 'b')).toBeNull();
    expect(t.failed('workload', 'b')).not.toBeNull();
  });

  it('0 never stops', () => {
    const t = new SameFailureTracker(0);
    for (let i = 0; i < 10; i++) expect(t.failed('disk', 'x')).toBeNull();
  });

  it('takes owned names, permutation ids and numbers out of the cause', () => {
    expect(failureCause('ss-rmx1-p0123456789ab-disk took 12.5 s on p0123456789ab')).toBe(failureCause('ss-rmx2-pfedcba987654-disk took 3 s on pfedcba987654'));
    expect(failureCause('not found')).not.toBe(failureCause('permission denied'));
  });
});
