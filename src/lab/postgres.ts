// A real PostgreSQL server from Debian's `postgresql` package, set up from scratch in a directory
// of ours: the store of the lab (`npm run lab -- up --postgres`) and of the tests
// (test/helpers/postgres.ts). initdb + pg_ctl on 127.0.0.1 and a free port, its unix socket in that
// directory, password (SCRAM) authentication for a superuser `storsweep` whose password is a file
// next to the data directory (read by reference, `${file:…}`, like every secret).
//
// initdb and the server refuse to run as root (https://www.postgresql.org/docs/current/app-initdb.html:
// "initdb must be run as the user that will own the server process"); as root they run as the
// Debian package's `postgres` user (runuser), which owns the directory.
import { execFile, type ExecFileOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './sshd.ts';

const run = promisify(execFile);

/** Where Debian's postgresql-NN packages put the server binaries (not on PATH). */
export const DEBIAN_PG_ROOT = '/usr/lib/postgresql';
/** The Debian package that owns the user the server runs as when we are root. */
export const PG_SYSTEM_USER = 'postgres';
export const PG_SUPERUSER = 'storsweep';

/** The newest /usr/lib/postgresql/<major>/bin holding initdb and pg_ctl, or null. */
export function findPostgresBin(root = DEBIAN_PG_ROOT): string | null {
  let majors: string[];
  try {
    majors = readdirSync(root);
  } catch {
    return null;
  }
  const found = majors
    .filter((m) => /^\d+$/.test(m))
    .sort((a, b) => Number(b) - Number(a))
    .map((m) => path.join(root, m, 'bin'))
    .find((bin) => existsSync(path.join(bin, 'initdb')) && existsSync(path.join(bin, 'pg_ctl')));
  return found ?? null;
}

export function requirePostgresBin(): string {
  const bin = findPostgresBin();
  if (!bin) throw new Error(`PostgreSQL server binaries not found under ${DEBIAN_PG_ROOT}/*/bin: install the Debian package postgresql (apt-get install -y postgresql; bash scripts/system-packages.sh test does)`);
  return bin;
}

export interface PostgresHandle {
  host: string;
  port: number;
  user: string;
  /** the superuser's password (tests); the file below holds it too */
  password: string;
  passwordFile: string;
  /** the directory holding data/, the socket, the log and the password file */
  dir: string;
  /** `postgresql://storsweep:${file:<passwordFile>}@127.0.0.1:<port>/<database>`: the password by reference */
  urlFor(database: string): string;
  /** a plain connection config (password revealed) for tests and the lab */
  connection(database: string): pg.ClientConfig;
  /** CREATE DATABASE (a fresh one per test keeps tests apart) */
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Run a server binary as the user owning the cluster (postgres when we are root). */
async function runPg(bin: string, tool: string, args: string[], opts: ExecFileOptions = {}): Promise<void> {
  const exe = path.join(bin, tool);
  try {
    if (asRoot()) await run('runuser', ['-u', PG_SYSTEM_USER, '--', exe, ...args], { ...opts, timeout: 120_000 });
    else await run(exe, args, { ...opts, timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${tool} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim().split('\n').slice(-5).join('\n')}`, { cause: err });
  }
}

async function chownToPg(p: string): Promise<void> {
  if (!asRoot()) return;
  await run('chown', ['-R', `${PG_SYSTEM_USER}:`, p]);
}

export interface StartPostgresOptions {
  /** the directory to use (created; emptied of a previous cluster only by the caller) */
  dir: string;
  /** 0 or absent: a free port */
  port?: number;
  /** extra server settings (`-c name=value`), e.g. the bench's shared_preload_libraries=pg_stat_statements */
  settings?: Record<string, string>;
}

/**
 * initdb a cluster in `dir/data` and start it on 127.0.0.1. The server keeps running after this
 * process exits (pg_ctl daemonizes it): stop it with the handle or `stopPostgres(dir)`.
 */
export async function startPostgres(o: StartPostgresOptions): Promise<PostgresHandle> {
  const bin = requirePostgresBin();
  const dir = path.resolve(o.dir);
  await fs.mkdir(dir, { recursive: true });
  const data = path.join(dir, 'data');
  const sock = path.join(dir, 'sock');
  await fs.mkdir(sock, { recursive: true });
  const passwordFile = path.join(dir, 'password');
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(passwordFile, password, { mode: 0o600 });
  // initdb reads the superuser's password from a file the cluster's owner can read; removed after
  const pwfile = path.join(dir, 'initdb.pw');
  await fs.writeFile(pwfile, password, { mode: 0o600 });
  await chownToPg(dir);
  await fs.chmod(dir, 0o700);
  try {
    await runPg(bin, 'initdb', ['-D', data, '-U', PG_SUPERUSER, `--pwfile=${pwfile}`, '--auth-local=scram-sha-256', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync'], { cwd: dir });
  } finally {
    await fs.rm(pwfile, { force: true });
  }
  const extra = Object.entries(o.settings ?? {}).map(([k, v]) => {
    if (!/^[a-z_.]+$/.test(k) || !/^[A-Za-z0-9_.,-]+$/.test(v)) throw new Error(`startPostgres: setting ${JSON.stringify(k)}=${JSON.stringify(v)}: expected a name of a-z, _ and . and a plain value`);
    return ` -c ${k}=${v}`;
  });
  let port = o.port || (await freePort());
  for (let attempt = 0; ; attempt++) {
    try {
      await runPg(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c fsync=off${extra.join('')}`, 'start'], { cwd: dir });
      break;
    } catch (err) {
      // another process took the free port between freePort() and the server's bind: try another
      if (attempt >= 2 || o.port) throw err;
      port = await freePort();
    }
  }
  await fs.writeFile(path.join(dir, 'port'), String(port));
  return handleFor(dir, port, password, passwordFile);
}

function handleFor(dir: string, port: number, password: string, passwordFile: string): PostgresHandle {
  const host = '127.0.0.1';
  const connection = (database: string): pg.ClientConfig => ({ host, port, user: PG_SUPERUSER, password, database });
  return {
    host,
    port,
    user: PG_SUPERUSER,
    password,
    passwordFile,
    dir,
    urlFor: (database) => `postgresql://${PG_SUPERUSER}:\${file:${passwordFile}}@${host}:${port}/${database}`,
    connection,
    async createDatabase(name) {
      const c = new pg.Client(connection('postgres'));
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await c.end();
      }
    },
    stop: () => stopPostgres(dir),
  };
}

/**
 * The running cluster in `dir` (the lab's, started earlier), or null when none runs there. A
 * postmaster.pid alone says nothing after a reboot or a kill -9: `pg_ctl status` asks the server
 * (exit 0: running; 3: not running — https://www.postgresql.org/docs/current/app-pg-ctl.html).
 */
export async function attachPostgres(dir: string): Promise<PostgresHandle | null> {
  const data = path.join(dir, 'data');
  if (!existsSync(path.join(data, 'postmaster.pid'))) return null;
  const bin = findPostgresBin();
  if (!bin || !(await runPg(bin, 'pg_ctl', ['-D', data, 'status'], { cwd: dir }).then(() => true, () => false))) return null;
  const port = Number(await fs.readFile(path.join(dir, 'port'), 'utf8'));
  const passwordFile = path.join(dir, 'password');
  return handleFor(dir, port, (await fs.readFile(passwordFile, 'utf8')).trim(), passwordFile);
}

/** Whether `dir` holds a cluster initdb made (started or not): its data is kept, never made anew. */
export function hasPostgresCluster(dir: string): boolean {
  return existsSync(path.join(dir, 'data', 'PG_VERSION')) && existsSync(path.join(dir, 'password'));
}

/**
 * Starts the cluster already in `dir` again (stopped by `pg_ctl stop`, `lab down`, a reboot) on its
 * recorded port, with its data and password as they were. A port another process took meanwhile is
 * an error naming it: the stored runs are never given up for a free port.
 */
export async function restartPostgres(dir: string): Promise<PostgresHandle> {
  const running = await attachPostgres(dir);
  if (running) return running;
  const bin = requirePostgresBin();
  const data = path.join(dir, 'data');
  const port = Number((await fs.readFile(path.join(dir, 'port'), 'utf8')).trim());
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`${path.join(dir, 'port')}: not a TCP port`);
  const sock = path.join(dir, 'sock');
  await fs.mkdir(sock, { recursive: true });
  await chownToPg(sock);
  try {
    await runPg(bin, 'pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start'], { cwd: dir });
  } catch (err) {
    throw new Error(`the PostgreSQL cluster in ${dir} (its data kept) did not start on its port ${port}: ${errorText(err)}; free the port, or remove ${dir} to start anew without its runs`, { cause: err });
  }
  const passwordFile = path.join(dir, 'password');
  return handleFor(dir, port, (await fs.readFile(passwordFile, 'utf8')).trim(), passwordFile);
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** pg_ctl stop (fast: open sessions are ended) and, unless `remove: false`, remove the directory. */
export async function stopPostgres(dir: string, opts: { remove?: boolean } = {}): Promise<void> {
  const data = path.join(dir, 'data');
  const bin = findPostgresBin();
  if (bin && existsSync(path.join(data, 'postmaster.pid'))) {
    await runPg(bin, 'pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], { cwd: dir }).catch((err: unknown) => {
      // already stopped (a stale postmaster.pid): nothing to stop
      if (existsSync(path.join(data, 'postmaster.pid'))) throw err;
    });
  }
  if (opts.remove !== false) await fs.rm(dir, { recursive: true, force: true });
}
