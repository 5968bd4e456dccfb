// Which store a command uses, and opening a run in it. SQLite (a run directory's run.sqlite) is the
// default; a PostgreSQL store comes from `--store URL` or the inventory's `store:` (`-i INV`), its
// password by reference, revealed here (the CLI is the composition root) and nowhere else.
//
// A run that `run --store` wrote still has a local run directory (raw output, log, plan.json);
// `store.json` there names the store (as given: the password's reference, never its value) and the
// run id, so every command that takes a run directory reads such a run from the store.
import fs from 'node:fs';
import path from 'node:path';
import { loadInventory, type LoadedInventory } from '../config/index.ts';
import { resolveStore, type ResolvedStore } from '../config/store.ts';
import { NotARunDirectory, StorsweepError, UsageError, errorMessage } from '../errors.ts';
import { readInputFile } from '../input/read-input.ts';
import { PgRunStoreBackend, type PgConnection } from '../results/pg-store.ts';
import type { RunStore } from '../results/port.ts';
import { SqliteRunStore } from '../results/sqlite-store.ts';
import { DB_FILE, ResultStore } from '../results/store.ts';
import { runSourceFrom, type SourceLoader } from '../report/source.ts';

export const STORE_POINTER = 'store.json';

export interface StorePointer {
  /** the store URL as given (a password only as its reference) */
  store: string;
  /** the directory a relative `${file:…}` reference is resolved against */
  baseDir: string;
  runId: string;
}

/** What a command was told about the store: `--store URL`, `--run ID`, `-i INV` (its `store:`). */
export interface StoreOptions {
  store?: string;
  run?: string;
  inventory?: string;
}

/**
 * `--store` wins over the inventory's `store:`; null: no store named (SQLite run directories).
 * `inv`: the inventory already loaded by the command (else `o.inventory` is loaded here).
 */
export function selectStore(o: StoreOptions, inv?: LoadedInventory): ResolvedStore | null {
  if (o.store !== undefined) {
    const r = resolveStore(o.store, process.cwd());
    if (!r.ok) throw new UsageError(`--store: ${r.error}`);
    return r.store;
  }
  if (inv) return inv.store ?? null;
  if (o.inventory !== undefined) return loadInventory(o.inventory).store ?? null;
  return null;
}

/** The text a run directory's store.json keeps for a store chosen by `--store` or the inventory. */
export function storeTextOf(o: StoreOptions, inv?: LoadedInventory): { store: string; baseDir: string } | null {
  if (o.store !== undefined) return { store: o.store, baseDir: process.cwd() };
  const loaded = inv ?? (o.inventory !== undefined ? loadInventory(o.inventory) : undefined);
  if (loaded?.inventory.store !== undefined) return { store: loaded.inventory.store, baseDir: path.dirname(path.resolve(loaded.file)) };
  return null;
}

/** What node-postgres is given: the password revealed here, in the composition root, and nowhere else. */
export function pgConnectionOf(s: ResolvedStore): PgConnection {
  return {
    host: s.host,
    port: s.port,
    user: s.user,
    database: s.database,
    ...(s.password ? { password: s.password.reveal() } : {}),
    ...(s.sslmode === 'require' ? { ssl: { rejectUnauthorized: false } } : s.sslmode === 'verify-full' ? { ssl: true } : {}),
  };
}

export async function connectStore(s: ResolvedStore): Promise<PgRunStoreBackend> {
  return PgRunStoreBackend.connect(pgConnectionOf(s), s.display);
}

export function readStorePointer(dir: string): StorePointer | null {
  const file = path.join(dir, STORE_POINTER);
  if (!fs.existsSync(file)) return null;
  let v: unknown;
  try {
    v = JSON.parse(readInputFile(file, 'config').toString('utf8'));
  } catch (err) {
    if (err instanceof StorsweepError) throw err;
    throw new NotARunDirectory(dir, `${STORE_POINTER} is not valid JSON: ${errorMessage(err)}`);
  }
  const p = v as Partial<StorePointer> | null;
  if (!p || typeof p.store !== 'string' || typeof p.baseDir !== 'string' || typeof p.runId !== 'string') throw new NotARunDirectory(dir, `${STORE_POINTER} does not name a store and a run`);
  return p as StorePointer;
}

export function writeStorePointer(dir: string, p: StorePointer): void {
  fs.writeFileSync(path.join(dir, STORE_POINTER), JSON.stringify(p, null, 1) + '\n', { flag: 'wx' });
}

export interface OpenedRun {
  store: RunStore;
  /** the SQLite store when the run is a run directory's run.sqlite (its lock and lock anchor) */
  sqlite: ResultStore | null;
  /** the PostgreSQL store the run is in */
  backend: PgRunStoreBackend | null;
  close(): Promise<void>;
}

/**
 * The run a command reads or tidies: `dir` (a run directory: its run.sqlite, or the store its
 * store.json names) or `--run ID` in the store from `--store` or the inventory's `store:`.
 */
export async function openRunFor(dir: string | undefined, o: StoreOptions, mode: 'read' | 'write'): Promise<OpenedRun> {
  if (dir !== undefined && o.run !== undefined) throw new UsageError(`give a run directory or --run ${o.run}, not both`);
  let backend: PgRunStoreBackend | null = null;
  let runId: string;
  let runDir: string | null = null;
  if (dir !== undefined) {
    const abs = path.resolve(dir);
    const pointer = fs.existsSync(path.join(abs, DB_FILE)) ? null : readStorePointer(abs);
    if (!pointer) {
      let sqlite: ResultStore;
      try {
        sqlite = mode === 'read' ? ResultStore.openReadOnly(abs) : ResultStore.open(abs);
      } catch (err) {
        // Ours keep their class (NotARunDirectory is a UsageError); SQLite's own (cannot open) too is a usage error
        if (err instanceof StorsweepError) throw err;
        throw new UsageError(errorMessage(err), { cause: err });
      }
      const store = new SqliteRunStore(sqlite);
      return { store, sqlite, backend: null, close: async () => sqlite.close() };
    }
    const r = resolveStore(pointer.store, pointer.baseDir);
    if (!r.ok) throw new UsageError(`${path.join(abs, STORE_POINTER)}: ${r.error}`);
    backend = await connectStore(r.store);
    runId = pointer.runId;
    runDir = abs;
  } else {
    if (o.run === undefined) throw new UsageError('give a run directory, or --run <runId> with --store URL or -i INVENTORY (its store:)');
    const s = selectStore(o);
    if (!s) throw new UsageError(`--run ${o.run}: which store? give --store URL, or -i INVENTORY with a store:`);
    backend = await connectStore(s);
    runId = o.run;
  }
  const b = backend;
  try {
    const store = await b.openRun(runId, { runDir });
    return { store, sqlite: null, backend: b, close: () => b.close() };
  } catch (err) {
    await b.close();
    throw err;
  }
}

/**
 * report / compare inputs: a run directory whose store.json names a store is read from there; with
 * a store selected (`--store`, `-i`), an input that is no path is a run id in it.
 */
export function storeAwareLoader(base: SourceLoader, o: StoreOptions): SourceLoader {
  return async (input) => {
    const isDir = fs.existsSync(input) && fs.statSync(input).isDirectory();
    const viaPointer = isDir && !fs.existsSync(path.join(input, DB_FILE)) && fs.existsSync(path.join(input, STORE_POINTER));
    const asRunId = !fs.existsSync(input) && (o.store !== undefined || o.inventory !== undefined);
    if (!viaPointer && !asRunId) return base(input);
    const open = () => openRunFor(viaPointer ? input : undefined, viaPointer ? {} : { ...o, run: input }, 'read');
    const opened = await open();
    try {
      // the run's facts now; its records when the report reads them (the store opened again)
      return await runSourceFrom(input, opened.store, open);
    } finally {
      await opened.close();
    }
  };
}
