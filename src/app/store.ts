// Which store a command uses, and opening a run in it. SQLite (a run directory's run.sqlite) is the
// default; a PostgreSQL store comes from `--store URL` or the inventory's `store:` (`-i INV`), its
// password by reference, revealed here (the CLI is the composition root) and nowhere else.
//
// A run that `run --store` wrote still has a local run directory (raw output, log, plan.json);
// `store.json` there names the store (the URL without any password part) and the run id, so every
// command that takes a run directory reads such a run from the store.
//
// A run directory may come from anywhere (a colleague's tarball, a shared disk): it names a host,
// never which secret goes there. The password comes only from what the user gives now — `--store
// URL` or the inventory's `store:` (`-i INV`) — and only when that names the same user, host, port
// and database as store.json; without it nothing is sent but the user name (docs/decisions.md,
// "A run directory does not choose secrets").
import fs from 'node:fs';
import path from 'node:path';
import { loadInventory, type LoadedInventory } from '../config/index.ts';
import type { Env } from '../contract/provider.ts';
import { DEFAULT_SSLMODE, parseStoreUrl, resolveStore, type ResolvedStore, type StoreUrl } from '../config/store.ts';
import { NotARunDirectory, StoreUnavailable, StorsweepError, UsageError, errorMessage } from '../errors.ts';
import { readInputFile } from '../input/read-input.ts';
import { visible } from '../text/visible.ts';
import { PgRunStoreBackend, type PgConnection } from '../results/pg-store.ts';
import { preferTls, UNVERIFIED_TLS } from '../results/pg-tls.ts';
import type { RunStore } from '../results/port.ts';
import { SqliteRunStore } from '../results/sqlite-store.ts';
import { DB_FILE, ResultStore } from '../results/store.ts';
import { runSourceFrom, type SourceLoader } from '../report/source.ts';
import { isLoopback } from './compose.ts';
import { notify } from './notify.ts';

export const STORE_POINTER = 'store.json';

export interface StorePointer {
  /** the store URL without any password part (`postgresql://user@host:port/db[?sslmode=…]`, sslmode when not the default) */
  store: string;
  /** the name of the password's reference the run was written with: only to say what to pass, never resolved */
  passwordRef?: string;
  runId: string;
}

/** What a command was told about the store: `--store URL`, `--run ID`, `-i INV` (its `store:`). */
export interface StoreOptions {
  store?: string;
  run?: string;
  inventory?: string | readonly string[];
  /** the environment as the CLI read it (`${env:…}` secrets, govc's GOVC_*): decision 0088 */
  env: Env;
}

/**
 * `--store` wins over the inventory's `store:`; null: no store named (SQLite run directories).
 * `inv`: the inventory already loaded by the command (else `o.inventory` is loaded here).
 */
export function selectStore(o: StoreOptions, inv?: LoadedInventory): ResolvedStore | null {
  if (o.store !== undefined) {
    const r = resolveStore(o.store, process.cwd(), o.env);
    if (!r.ok) throw new UsageError(`--store: ${r.error}`);
    return r.store;
  }
  if (inv) return inv.store ?? null;
  if (o.inventory !== undefined) return loadInventory(o.inventory, o.env).store ?? null;
  return null;
}

/** What a run directory's store.json keeps for a store: its URL without the password part, the reference's name apart. */
export function storePointerOf(s: StoreUrl): { store: string; passwordRef?: string } {
  return { store: `${s.display}${sslParam(s)}`, ...(s.passwordRef !== undefined ? { passwordRef: s.passwordRef } : {}) };
}

const sslParam = (s: StoreUrl) => (s.sslmode !== DEFAULT_SSLMODE ? `?sslmode=${s.sslmode}` : '');

const sameStore = (a: StoreUrl, b: StoreUrl) => a.host.toLowerCase() === b.host.toLowerCase() && a.port === b.port && a.user === b.user && a.database === b.database;

/** The URL to pass for a store.json's store: its reference's name in place of the password, if it had one. */
function urlToPass(s: StoreUrl, ref: string | undefined): string {
  const host = s.host.includes(':') ? `[${s.host}]` : s.host;
  return `postgresql://${encodeURIComponent(s.user)}${ref !== undefined ? `:${ref}` : ''}@${host}:${s.port}/${encodeURIComponent(s.database)}${sslParam(s)}`;
}

/**
 * The store a run directory's store.json names, with the password only from the store the user
 * gave now (`--store`, `-i INV`'s `store:`), which must name the same user, host, port and database.
 * Without one: connected without a password (a server that asks for one is refused by us, nothing sent).
 */
export function storeForPointer(dir: string, pointer: StorePointer, o: StoreOptions): { store: ResolvedStore; given: boolean } {
  const file = path.join(dir, STORE_POINTER);
  const p = parseStoreUrl(pointer.store);
  if (!p.ok) throw new UsageError(`${file}: ${p.error}`);
  // an older store.json kept the reference in the URL: its name is kept for the message, never resolved
  const recorded: StoreUrl = { ...p.url };
  const ref = pointer.passwordRef ?? recorded.passwordRef;
  delete recorded.passwordRef;
  // store.json may come from anyone: what it names is shown on one line (a newline would forge one)
  const pass = visible(urlToPass(recorded, ref));
  const named = visible(recorded.display);
  const given = selectStore(o);
  if (given) {
    if (!sameStore(given, recorded)) {
      throw new UsageError(`${visible(file)} names the store ${named}, not the one given (${visible(given.display)}): a run directory is read only from the store it names; give --store '${pass}' (or -i with an inventory whose store: names it)`);
    }
    return { store: given, given: true };
  }
  if (ref !== undefined) {
    throw new UsageError(`${visible(file)}: the run is in ${named}, which was written with the password ${visible(ref)}; a run directory never chooses which secret is sent where: give --store '${pass}' (or -i with an inventory whose store: names it)`);
  }
  return { store: recorded, given: false };
}

/**
 * What node-postgres is given: the password revealed here, in the composition root, and nowhere
 * else; TLS as the URL's sslmode says, `prefer` settled by trying the server once (results/pg-tls.ts).
 * A connection to another machine that ends up in plain text is warned about, once per store.
 */
export async function pgConnectionOf(s: ResolvedStore, o: { noPassword?: string } = {}): Promise<PgConnection> {
  // `noPassword`: the store came from a run directory alone: a server that asks for a password gets
  // none (not PGPASSWORD, not ~/.pgpass: node-postgres' fallbacks), the connection fails with this
  const refuse = o.noPassword;
  const base: PgConnection = {
    host: s.host,
    port: s.port,
    user: s.user,
    database: s.database,
    ...(s.password ? { password: s.password.reveal() } : refuse !== undefined ? { password: refusePassword(refuse) } : {}),
  };
  // `ssl` always set: node-postgres would otherwise take it from PGSSLMODE
  let conn: PgConnection;
  if (s.sslmode === 'prefer') {
    try {
      conn = (await preferTls(base)).connection;
    } catch (err) {
      // as PgRunStoreBackend.connect says a connection that failed
      throw new StoreUnavailable(s.display, errorMessage(err), { cause: err });
    }
  } else conn = { ...base, ssl: s.sslmode === 'disable' ? false : s.sslmode === 'require' ? { ...UNVERIFIED_TLS } : true };
  warnIfPlaintext(s, conn.ssl !== false);
  return conn;
}

/**
 * What to warn about a connection to `host` that is `encrypted` or not, or null: only a connection
 * to another machine (app/compose.ts isLoopback: a name is not resolved) in plain text, where every
 * query, plan and result crosses the network readable and changeable.
 */
export function plaintextWarning(where: string, host: string, how: { encrypted: boolean; sslmode: string }): string | null {
  if (how.encrypted || isLoopback(host)) return null;
  const why = how.sslmode === 'disable' ? 'sslmode=disable' : 'the server offers no TLS';
  return `${where}: the connection is not encrypted (${why}): plans, ledger and results cross the network in clear; turn on ssl in the server and add ?sslmode=verify-full to the store URL`;
}

/** Stores already warned about in this process (a worker reconnects; the warning is said once). */
const warnedPlaintext = new Set<string>();

function warnIfPlaintext(s: ResolvedStore, encrypted: boolean): void {
  const text = plaintextWarning(s.display, s.host, { encrypted, sslmode: s.sslmode });
  if (text === null || warnedPlaintext.has(s.display)) return;
  warnedPlaintext.add(s.display);
  notify(`warning: ${text}\n`);
}

/**
 * node-postgres asks this (as a method of its client) when the server wants a password: the client
 * fails to connect with `message`, and its socket is closed (node-postgres leaves a connection that
 * failed while connecting open, which would keep the process alive).
 */
function refusePassword(message: string): () => Promise<string> {
  return function (this: { connection?: { stream?: { destroy(): void } } } | undefined) {
    this?.connection?.stream?.destroy();
    return Promise.reject(new UsageError(message));
  };
}

export async function connectStore(s: ResolvedStore, o: { noPassword?: string } = {}): Promise<PgRunStoreBackend> {
  return PgRunStoreBackend.connect(await pgConnectionOf(s, o), s.display);
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
  if (!p || typeof p.store !== 'string' || typeof p.runId !== 'string' || (p.passwordRef !== undefined && typeof p.passwordRef !== 'string')) throw new NotARunDirectory(dir, `${STORE_POINTER} does not name a store and a run`);
  return { store: p.store, runId: p.runId, ...(p.passwordRef !== undefined ? { passwordRef: p.passwordRef } : {}) };
}

export function writeStorePointer(dir: string, p: StorePointer): void {
  fs.writeFileSync(path.join(dir, STORE_POINTER), JSON.stringify(p, null, 1) + '\n', { flag: 'wx' });
}

/** Connects to the store a run directory's store.json names, the password only from `o` (storeForPointer). */
export async function connectPointerStore(dir: string, pointer: StorePointer, o: StoreOptions): Promise<PgRunStoreBackend> {
  const { store: s, given } = storeForPointer(dir, pointer, o);
  const noPassword = `${visible(s.display)} asks for a password; a run directory never chooses which secret is sent where: give --store '${visible(urlToPass(s, '${env:NAME}'))}' with the password's reference (or -i with an inventory whose store: names it)`;
  return connectStore(s, given ? {} : { noPassword });
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
    backend = await connectPointerStore(abs, pointer, o);
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
    const open = () => openRunFor(viaPointer ? input : undefined, viaPointer ? o : { ...o, run: input }, 'read');
    const opened = await open();
    try {
      // the run's facts now; its records when the report reads them (the store opened again)
      return await runSourceFrom(input, opened.store, open);
    } finally {
      await opened.close();
    }
  };
}
