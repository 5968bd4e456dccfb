// The key a record is stored under in a repetition (the results table's test_id column, with the
// permutation and repetition): its test's id, and for one VM of a `vm.count` pass the member too —
// N members and their aggregate are records of one test and repetition (record.ts VmShare).
import type { ResultRecord } from './record.ts';

export function resultKey(r: Pick<ResultRecord, 'test' | 'vm'>): string {
  return r.vm?.role === 'member' ? `${r.test.id}@vm${r.vm.index ?? 0}` : r.test.id;
}
