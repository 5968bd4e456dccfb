// The one rule for removing what a run created, shared by the executor's teardown and `cleanup`:
// an intent authorises nothing. A ledger row is destroyed with its recorded id/data only when its
// create was sent (state 'sent', or an id came back); a row that never got past 'intent' (a crash
// before the provider sent anything, or a run directory from before the 'sent' state existed) is
// removed only if the provider finds the object by its owned name, and otherwise marked
// 'not-sent'. Rows marked 'refused' or 'not-sent' are never torn down. Each provider's destroy()
// then proves the object is ours (owned name, exact recorded id or layout) before touching it.
// One routine (tearDownRow) removes a row for both, with the same retries (of what the provider
// calls transient), the same deadline per attempt, and the same journal events.
import { redact } from '../config/secrets.ts';
import { errorMessage, UnsafeOperation } from '../errors.ts';
import type { LedgerRow } from '../results/port.ts';
import { asRunStore, type AnyRunStore } from '../results/sqlite-store.ts';
import type { Provider, ProviderContext } from '../contract/provider.ts';
import { DEFAULT_STEP_TIMEOUT_MS, withRetry, withTimeout, type RetryPolicy } from './retry.ts';

/** What the executor writes as an intent row's data (see runStep): the step, not the object. */
function isIntentData(data: Record<string, unknown>): boolean {
  const keys = Object.keys(data).sort();
  return keys.length === 2 && keys[0] === 'arguments' && keys[1] === 'operation';
}

/**
 * True when the row proves its create was sent: an id came back, or apply() recorded 'sent' data.
 * A 'kept' or 'remove-failed' row from an old run that only ever had its intent data is not.
 */
export function wasSent(row: Pick<LedgerRow, 'state' | 'objectId' | 'data'>): boolean {
  if (row.state === 'intent' || row.state === 'refused' || row.state === 'not-sent') return false;
  if (row.objectId !== null) return true;
  return !isIntentData(row.data);
}

export type TeardownOutcome = 'removed' | 'absent' | 'not-sent';

/** Finds another ledger row of the run (by kind and owned name). */
export type LedgerLookup = (kind: string, name: string) => LedgerRow | undefined | Promise<LedgerRow | undefined>;

/**
 * A container goes only after its content: a row whose recorded data says it `holds` another owned
 * object (an ESXi VMFS partition holds the run's datastore) is destroyed only when that object was
 * never sent or this run removed it itself. If it was created and then found gone, something else
 * may have taken its place (a user's VMFS, unmounted, is invisible to the extent listing): leave
 * the container alone and say why.
 */
async function checkHeldContent(row: LedgerRow, lookup: LedgerLookup | undefined): Promise<void> {
  const holds = row.data.holds as { kind?: unknown; name?: unknown } | undefined;
  if (!lookup || !holds || typeof holds.kind !== 'string' || typeof holds.name !== 'string') return;
  const inner = await lookup(holds.kind, holds.name);
  if (!inner || !wasSent(inner) || inner.state === 'removed') return;
  throw new UnsafeOperation(
    `left alone: ${row.kind} ${row.name} held ${holds.kind} ${holds.name}, which this run did not remove (${inner.state === 'absent' ? 'it was found gone: something else may be on it now' : `its state is ${inner.state}`}); check the host, then remove it by hand if it is ours`,
    { operation: 'destroy', target: row.name },
  );
}

/** Destroys one ledger row's object under the rules above; throws what destroy/find throw. */
export async function destroyRecorded(provider: Provider, row: LedgerRow, ctx: ProviderContext, lookup?: LedgerLookup): Promise<TeardownOutcome> {
  const ref = { kind: row.kind, name: row.name, provider: row.provider };
  await checkHeldContent(row, lookup);
  if (wasSent(row)) return provider.destroy({ ...ref, id: row.objectId, data: row.data }, ctx);
  // Never proven sent: only an object carrying our owned name may go.
  const found = await provider.find({ kind: row.kind, name: row.name });
  if (!found) return 'not-sent';
  return provider.destroy({ ...ref, id: found.id, data: found.data }, ctx);
}

/**
 * Set in a row's data (an ISO time) when its create was sent, timed out and had still not returned
 * when the run stopped waiting (executor.ts settleOrphan): the object may appear after anyone looked.
 */
export const UNSETTLED_KEY = 'unsettledAt';
/**
 * How long after that `cleanup` keeps such a row open when it finds nothing: a vSphere/ESXi/Hyper-V
 * create task runs on the server regardless of the client, and nothing we can ask tells us a task
 * started by a gone session will never finish. After this, a look that finds nothing marks it absent.
 */
export const UNSETTLED_WINDOW_MS = 30 * 60_000;
export const UNSETTLED_REASON = 'create may still complete; run storsweep cleanup';

/**
 * What to record when a row whose create never settled was not found: never 'absent' from a run's
 * own teardown (the create may still complete after it looked); from `cleanup`, only once the
 * window has passed. Null: record the outcome as it is.
 */
function unsettledReason(row: LedgerRow, prefix: '' | 'cleanup-', nowMs = Date.now()): string | null {
  const at = row.data[UNSETTLED_KEY];
  if (typeof at !== 'string') return null;
  if (prefix === '') return UNSETTLED_REASON;
  const until = Date.parse(at) + UNSETTLED_WINDOW_MS;
  if (!(nowMs >= until)) return `not found yet, but its create was still running when the run gave up on it at ${at} and may still complete; run storsweep cleanup again after ${new Date(Number.isNaN(until) ? nowMs + UNSETTLED_WINDOW_MS : until).toISOString()}`;
  return null;
}

export const NOT_SENT_REASON = 'never sent (only an intent was recorded) and not found by its owned name: nothing to remove';

/** Store writes around a removal: a failure to record must not stop the removal of the rest. */
export async function record(fn: () => void | Promise<void>): Promise<void> {
  try {
    await fn();
  } catch {
    /* the object is gone or not regardless; the ledger may be stale, cleanup rechecks it */
  }
}

export interface TeardownPolicy {
  /** retries of a failure the provider calls transient (as for a step: `run --retries`) */
  retry?: Partial<RetryPolicy>;
  /** deadline of each attempt (as for a step: the playbook's timeouts.stepSec) */
  timeoutMs?: number;
}

export type RowTeardown = { outcome: TeardownOutcome } | { failed: string };

/**
 * Removes one ledger row's object (destroyRecorded), retrying what the provider calls transient,
 * each attempt under the deadline, and records it: the row's new state, and journal events on the
 * row's step (`kind:name`) — `<prefix>retry` per retried attempt, then `<prefix><outcome>` or
 * `<prefix>remove-failed` with the reason, and `<prefix>note` for what the provider says meanwhile.
 * `prefix` is '' for a run's teardown and 'cleanup-' for
 * `storsweep cleanup`. Teardown runs even when the run was interrupted: `ctx.signal` is not used.
 */
export async function tearDownRow(
  given: AnyRunStore,
  provider: Provider,
  row: LedgerRow,
  ctx: Omit<ProviderContext, 'signal' | 'sent' | 'log'>,
  o: TeardownPolicy & { prefix: '' | 'cleanup-'; onRetry?: (err: unknown, attempt: number) => void; onNote?: (text: string) => void; guard?: () => void },
): Promise<RowTeardown> {
  const store = asRunStore(given);
  const step = `${row.kind}:${row.name}`;
  const what = `destroy ${row.kind} ${row.name}`;
  // What the provider says while it decides goes to the journal (`<prefix>note`), under the object.
  const log = (message: string): void => {
    const text = redact(message);
    // a synchronous callback: the store keeps call order (results/port.ts), so the note is
    // journaled before the outcome written after it
    void record(() => store.appendJournal(row.permutationId, step, `${o.prefix}note`, { message: text }));
    o.onNote?.(text);
  };
  try {
    const outcome = await withRetry(
      () => {
        // a worker's lease, checked right before each attempt goes out (run/executor.ts LeaseGuard)
        o.guard?.();
        return withTimeout((signal) => destroyRecorded(provider, row, { ...ctx, signal, log, sent: () => undefined }, (kind, name) => store.ledgerRow(kind, name)), o.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS, what);
      },
      (err) => provider.isTransient?.(err) ?? false,
      {
        ...o.retry,
        onRetry: (err, n) => {
          void record(() => store.appendJournal(row.permutationId, step, `${o.prefix}retry`, { attempt: n + 1, reason: redact(errorMessage(err)) }));
          o.onRetry?.(err, n);
        },
      },
    );
    const unsettled = outcome === 'absent' ? unsettledReason(row, o.prefix) : null;
    if (unsettled) {
      // kept live: found nothing now is not proof that nothing will appear
      await record(() => store.ledgerState(row, 'remove-failed', unsettled));
      await record(() => store.appendJournal(row.permutationId, step, `${o.prefix}remove-failed`, { reason: unsettled }));
      return { failed: unsettled };
    }
    await record(() => store.ledgerState(row, outcome, outcome === 'not-sent' ? NOT_SENT_REASON : null));
    await record(() => store.appendJournal(row.permutationId, step, `${o.prefix}${outcome}`, null));
    return { outcome };
  } catch (err) {
    const reason = redact(errorMessage(err));
    await record(() => store.ledgerState(row, 'remove-failed', reason));
    await record(() => store.appendJournal(row.permutationId, step, `${o.prefix}remove-failed`, { reason }));
    return { failed: reason };
  }
}

/**
 * `storsweep cleanup`: every object the run left behind, newest first, through the rule above and
 * the same routine as a run's teardown. Returns how many could not be removed. `say` receives one
 * line per object, after the provider's notes about it (indented; only when it was not simply
 * removed — all are in the journal) and one per retried attempt. `heldBack` names why a
 * permutation's objects must stay (its tool may still be running on them): those rows stay open.
 */
export async function cleanupLedger(
  given: AnyRunStore,
  providerFor: (permutationId: string) => Promise<Provider | null>,
  say: (line: string) => void,
  policy: TeardownPolicy = {},
  heldBack: (permutationId: string) => string | undefined = () => undefined,
): Promise<number> {
  const store = asRunStore(given);
  const runId = (await store.meta()).runId;
  let failed = 0;
  for (const obj of (await store.leftovers()).reverse()) {
    // a disk our tool may still be writing to is not detached or deleted under it
    const held = heldBack(obj.permutationId);
    if (held) {
      failed++;
      if (wasSent(obj)) await record(() => store.ledgerState(obj, 'remove-failed', `left in place: ${held}; run cleanup again once it has ended`));
      say(`left in place: ${obj.kind} ${obj.name}: ${held}`);
      continue;
    }
    const provider = await providerFor(obj.permutationId);
    if (!provider) continue;
    // what the provider says while it decides (a drive "left alone because …") is journaled, and
    // shown under the object unless it was simply removed
    const notes: string[] = [];
    const r = await tearDownRow(store, provider, obj, { runId, permutationId: obj.permutationId, axes: {} }, {
      ...policy,
      prefix: 'cleanup-',
      onNote: (text) => notes.push(`  ${obj.kind} ${obj.name}: ${text}`),
      onRetry: (err, n) => say(`retrying removal of ${obj.kind} ${obj.name} (attempt ${n + 1}): ${redact(errorMessage(err))}`),
    });
    if (!('outcome' in r && r.outcome === 'removed')) notes.forEach((n) => say(n));
    if ('failed' in r) {
      failed++;
      say(`could not remove ${obj.kind} ${obj.name}: ${r.failed}`);
    } else say(`${r.outcome === 'removed' ? 'removed' : r.outcome === 'absent' ? 'already gone' : 'never created'}: ${obj.kind} ${obj.name}`);
  }
  return failed;
}
