// The one rule for removing what a run created, shared by the executor's teardown and `cleanup`:
// an intent authorises nothing. A ledger row is destroyed with its recorded id/data only when its
// create was sent (state 'sent', or an id came back); a row that never got past 'intent' (a crash
// before the provider sent anything, or a run directory from before the 'sent' state existed) is
// removed only if the provider finds the object by its owned name, and otherwise marked
// 'not-sent'. Rows marked 'refused' or 'not-sent' are never torn down. Each provider's destroy()
// then proves the object is ours before touching it: a row says where to look, never what may be
// destroyed. The row's name must be one this run gives (`ss-<runId>-<permutationId>-…`), and the
// host must show the object carrying it (a datastore's name, a VMFS label) at that moment; where a
// host keeps no such mark (a bare partition table), only a device the user confirmed in this
// command (`--confirm-destroy`) is acted on. `cleanup --dry-run` reads the same way and prints
// what the action would act on, from the same plan (previewLedger). One routine (tearDownRow)
// removes a row for teardown, cleanup, takeover and resume, with the same retries (of what the
// provider calls transient), the same deadline per attempt, and the same journal events.
import { redact } from '../input/secrets.ts';
import { errorMessage, UnsafeOperation } from '../errors.ts';
import type { LedgerRow } from '../results/port.ts';
import { asRunStore, type AnyRunStore } from '../results/sqlite-store.ts';
import type { OwnedObjectRef, Provider, ProviderContext, ProviderName } from '../contract/provider.ts';
import { ownedPrefix } from '../plan/permutation.ts';
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

/**
 * A row names only what this run creates: its name carries the run's id and its permutation's
 * (plan/permutation.ts ownedPrefix). A row edited to name anything else (a user's datastore) is
 * refused before the host is asked; the provider then finds the object carrying that name.
 */
function checkOwnedName(row: LedgerRow, runId: string): void {
  const prefix = `${ownedPrefix(runId, row.permutationId)}-`;
  if (row.name.startsWith(prefix)) return;
  throw new UnsafeOperation(`left alone: ${row.kind} ${row.name} is not a name run ${runId} gives (${prefix}…): the ledger row names something this run did not create`, { operation: 'destroy', target: row.name });
}

type DestroyRef = OwnedObjectRef & { provider: ProviderName; id: string | null; data: Record<string, unknown> };

/** What destroy() is given for a row (checked as above), or null: never sent and not found by its owned name. */
async function recordedRef(provider: Provider, row: LedgerRow, ctx: ProviderContext, lookup: LedgerLookup | undefined): Promise<DestroyRef | null> {
  checkOwnedName(row, ctx.runId);
  await checkHeldContent(row, lookup);
  const ref = { kind: row.kind, name: row.name, provider: row.provider };
  if (wasSent(row)) return { ...ref, id: row.objectId, data: row.data };
  // Never proven sent: only an object carrying our owned name may go.
  const found = await provider.find({ kind: row.kind, name: row.name });
  return found ? { ...ref, id: found.id, data: found.data } : null;
}

/** Destroys one ledger row's object under the rules above; throws what destroy/find throw. */
export async function destroyRecorded(provider: Provider, row: LedgerRow, ctx: ProviderContext, lookup?: LedgerLookup): Promise<TeardownOutcome> {
  const ref = await recordedRef(provider, row, ctx, lookup);
  return ref ? provider.destroy(ref, ctx) : 'not-sent';
}

/**
 * What destroyRecorded would do, read and decided the same way and sending nothing: 'remove' with
 * exactly what the action acts on, 'absent', 'not-sent', `unknown` (the provider plans no such
 * kind: only the ledger can be shown), or why it would not (the refusal the action would give).
 */
export type DestroyPreview = { would: 'remove'; acts: string } | { would: 'absent' | 'not-sent' | 'unknown' } | { refused: string };

export async function previewRecorded(provider: Provider, row: LedgerRow, ctx: ProviderContext, lookup?: LedgerLookup): Promise<DestroyPreview> {
  try {
    const ref = await recordedRef(provider, row, ctx, lookup);
    if (!ref) return { would: 'not-sent' };
    const plan = provider.planDestroy ? await provider.planDestroy(ref, ctx) : null;
    if (!plan) return { would: 'unknown' };
    return plan.outcome === 'remove' ? { would: 'remove', acts: plan.acts } : { would: 'absent' };
  } catch (err) {
    return { refused: redact(errorMessage(err)) };
  }
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
  policy: TeardownPolicy & { confirmedDestroy?: readonly string[] } = {},
  heldBack: (permutationId: string) => string | undefined = () => undefined,
): Promise<number> {
  const store = asRunStore(given);
  const runId = (await store.meta()).runId;
  const confirmed = policy.confirmedDestroy ? { confirmedDestroy: policy.confirmedDestroy } : {};
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
    const r = await tearDownRow(store, provider, obj, { runId, permutationId: obj.permutationId, axes: {}, ...confirmed }, {
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

/**
 * `storsweep cleanup --dry-run`: what cleanupLedger would do with each object, newest first, read
 * from the host the same way (previewRecorded) and sending nothing; one line each, in the words the
 * cleanup itself prints: `would remove KIND NAME: ACTS` (exactly what the action acts on), `already
 * gone`, `never created`, or `would not remove KIND NAME: REASON` (the reason the cleanup would
 * give), and the provider's notes under it. A row the preview would remove counts as removed for
 * the rows after it (a partition after the datastore it held). `providerFor` may throw (no
 * inventory, host unreachable): the row is then shown from the ledger, with why it was not
 * checked. Returns how many would not be removed.
 */
export async function previewLedger(
  given: AnyRunStore,
  providerFor: (permutationId: string) => Promise<Provider | null>,
  say: (line: string) => void,
  confirmedDestroy?: readonly string[],
): Promise<number> {
  const store = asRunStore(given);
  const runId = (await store.meta()).runId;
  const wouldGo = new Set<string>();
  const lookup: LedgerLookup = async (kind, name) => {
    const r = await store.ledgerRow(kind, name);
    return r && wouldGo.has(`${kind}:${name}`) ? { ...r, state: 'removed' } : r;
  };
  let refused = 0;
  for (const obj of (await store.leftovers()).reverse()) {
    const what = `${obj.kind} ${obj.name}`;
    const notes: string[] = [];
    let p: DestroyPreview;
    let unchecked = '';
    try {
      const provider = await providerFor(obj.permutationId);
      const ctx: ProviderContext = { runId, permutationId: obj.permutationId, axes: {}, signal: new AbortController().signal, sent: () => undefined, log: (m) => void notes.push(`  ${what}: ${redact(m)}`), ...(confirmedDestroy ? { confirmedDestroy } : {}) };
      p = provider ? await previewRecorded(provider, obj, ctx, lookup) : { would: 'unknown' };
    } catch (err) {
      p = { would: 'unknown' };
      unchecked = `; not checked on the host: ${redact(errorMessage(err))}`;
    }
    if ('refused' in p) {
      refused++;
      notes.forEach((n) => say(n));
      say(`would not remove ${what}: ${p.refused}`);
    } else if (p.would === 'remove') {
      wouldGo.add(`${obj.kind}:${obj.name}`);
      say(`would remove ${what}: ${p.acts}`);
    } else if (p.would === 'unknown') {
      const how = obj.objectId ? ` (${obj.objectId})` : wasSent(obj) ? ' (sent; checked against the recorded data)' : ' (never sent: only if found by its owned name)';
      say(`would remove ${what}${how}${unchecked}`);
    } else {
      notes.forEach((n) => say(n));
      say(`${p.would === 'absent' ? 'already gone' : 'never created'}: ${what}`);
    }
  }
  return refused;
}
