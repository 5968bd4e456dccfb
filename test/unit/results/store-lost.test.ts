// Which failures mean "the run's store is lost" (the sweep stops: StoreLost, thrown by the store
// adapters) and which are one call's or one target's own: decided by the adapter that saw the
// failure, never by a code alone — an SSH connection refused is not a lost store.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunPlan } from '../../../src/contract/plan.ts';
import { StoreLost } from '../../../src/errors.ts';
import { isPgConnectionLost } from '../../../src/results/pg-store.ts';
import { isDiskLost, isStoreLost, storeLostOr, type RunMeta } from '../../../src/results/port.ts';
import { storeRaw } from '../../../src/results/raw.ts';
import { SqliteRunStore } from '../../../src/results/sqlite-store.ts';
import { ResultStore } from '../../../src/results/store.ts';

const coded = (code: string, message = `failed: ${code}`) => Object.assign(new Error(message), { code });

describe('isDiskLost (SQLite store, raw output)', () => {
  it('a full, over-quota or read-only disk, an I/O error: lost; anything else: not', () => {
    for (const c of ['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY', 'SQLITE_READONLY_DBMOVED']) expect(isDiskLost(coded(c)), c).toBe(true);
    for (const c of ['EACCES', 'ENOENT', 'ECONNREFUSED', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_BUSY', 'SQLITE_CORRUPT']) expect(isDiskLost(coded(c)), c).toBe(false);
    expect(isDiskLost(new Error('no code'))).toBe(false);
    expect(isDiskLost(null)).toBe(false);
  });
});

describe('isPgConnectionLost (PostgreSQL store)', () => {
  it('SQLSTATE 08, 53, 57P, 25006, a refused/reset/timed-out connection, node-postgres connection messages: lost', () => {
    for (const c of ['08006', '08001', '08P01', '53100', '53300', '57P01', '57P03', '25006', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']) expect(isPgConnectionLost(coded(c)), c).toBe(true);
    for (const m of ['Connection terminated unexpectedly', 'Query read timeout', 'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable']) expect(isPgConnectionLost(new Error(m)), m).toBe(true);
  });
  it('a statement of ours failing is that call\'s failure: unique violation, undefined table, syntax, a cancelled statement', () => {
    for (const c of ['23505', '42P01', '42601', '57014', '40001']) expect(isPgConnectionLost(coded(c)), c).toBe(false);
    expect(isPgConnectionLost(new Error('run "x" not found'))).toBe(false);
  });
});

describe('storeLostOr / isStoreLost', () => {
  it('wraps a lost-store failure (also one behind a cause) with its own message, naming the store; leaves any other error as it is', () => {
    const inner = coded('ENOSPC', 'ENOSPC: no space left on device, write');
    const lost = storeLostOr(new Error('writing the ledger', { cause: inner }), '/runs/r1', isDiskLost);
    expect(lost).toBeInstanceOf(StoreLost);
    expect((lost as StoreLost).message).toBe('writing the ledger');
    expect((lost as StoreLost).details.store).toBe('/runs/r1');
    expect(storeLostOr(lost, '/elsewhere', isDiskLost)).toBe(lost);
    const other = coded('SQLITE_CONSTRAINT_UNIQUE');
    expect(storeLostOr(other, '/runs/r1', isDiskLost)).toBe(other);
  });

  it('the executor\'s test: a StoreLost, itself or as the cause of a provider\'s error; never a bare code', async () => {
    const lost = new StoreLost('postgresql://u@h:5432/db', coded('ECONNREFUSED'));
    expect(isStoreLost(lost)).toBe(true);
    expect(isStoreLost(new Error('recording the disk as sent', { cause: lost }))).toBe(true);
    // a real refused TCP connection, as the SSH layer reports it: one target's failure
    const refused = await new Promise<Error>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = srv.address() as net.AddressInfo;
        srv.close(() => net.connect(port, '127.0.0.1').on('error', resolve));
      });
    });
    expect((refused as { code?: string }).code).toBe('ECONNREFUSED');
    expect(isStoreLost(refused)).toBe(false);
    expect(isStoreLost(new Error('ssh://bench@127.0.0.1:22: SSH connection failed', { cause: refused }))).toBe(false);
    expect(isStoreLost(coded('ENOSPC'))).toBe(false);
    expect(isStoreLost(coded('57P01'))).toBe(false);
  });
});

describe('the adapters throw it', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-lost-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const meta: RunMeta = { runId: 'rl', playbook: 'pb', playbookFile: '/x/pb.yaml', inventoryFile: '/x/inv.yaml', target: 't', startedAt: '2024-01-01T00:00:00.000Z', fingerprint: {}, insecureEndpoints: [] };
  const plan: RunPlan = { version: 1, runId: 'rl', playbook: 'pb', target: 't', provider: 'local', axes: [], baseline: null, profiles: {}, permutations: [], totalEstimateSec: 0 };

  it('SQLite: a write the database refuses as read-only (SQLITE_READONLY) is a StoreLost naming the run directory; a read still works', async () => {
    const runDir = path.join(dir, 'run');
    ResultStore.create(runDir, meta, plan).close();
    const store = new SqliteRunStore(ResultStore.openReadOnly(runDir));
    try {
      const err = await store.appendJournal(null, 'run', 'x', null).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreLost);
      expect((err as StoreLost).details.store).toBe(runDir);
      expect(((err as StoreLost).cause as { code?: string }).code).toMatch(/^SQLITE_READONLY/);
      expect((await store.meta()).runId).toBe('rl');
    } finally {
      await store.close();
    }
  });

  it('raw output: a failure that is not the disk\'s (a directory where the file goes) stays what it is', () => {
    fs.mkdirSync(path.join(dir, 'raw', 'p1.json'), { recursive: true });
    let err: unknown;
    try {
      storeRaw(dir, 'raw/p1.json', '{}');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(StoreLost);
  });
});
