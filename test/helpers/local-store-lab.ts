// The set-up the PostgreSQL store's CLI tests share: a temporary directory with the playbook
// (pb.yaml), local targets each with a work directory of its own (work-<target>) in an inventory
// without a store (inv.yaml), a real PostgreSQL (test/helpers/postgres.ts) and, when asked for, one
// database for the whole file with an inventory naming it as its store (inv-store.yaml). With
// `fioGate`, every target runs fio through a gate the test opens and closes (test/helpers/fio-gate.ts;
// open at first).
//
//   let lab: LocalStoreLab;
//   beforeAll(async () => (lab = await localStoreLab('store-cli', { playbook, targets: ['here'], database: 'cli' })), 120_000);
//   afterAll(() => lab?.stop());
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fioGate, type FioGate } from './fio-gate.ts';
import { startTestPostgres, type TestDatabase, type TestPostgres } from './postgres.ts';

export interface LocalStoreLab {
  dir: string;
  pgsrv: TestPostgres;
  /** the file's database (only with `database`) */
  db: TestDatabase;
  /** pb.yaml */
  playbook: string;
  /** inv.yaml: the local targets, no store */
  inventory: string;
  /** inv-store.yaml: the same with `store:` the file's database (only with `database`) */
  storeInventory: string;
  /** the work directory of local target `target` */
  workdir(target: string): string;
  /** the gate every target's fio passes (only with `fioGate`) */
  gate: FioGate;
  /** stops PostgreSQL and removes the directory */
  stop(): Promise<void>;
}

export interface LocalStoreLabOptions {
  /** the playbook's text (pb.yaml; none written without it) */
  playbook?: string;
  /** names of `local` targets */
  targets: string[];
  /** make one database for the file, its name starting with this */
  database?: string;
  /** every target's fioPath is a gate (lab.gate, open at first) */
  fioGate?: boolean;
}

export async function localStoreLab(name: string, o: LocalStoreLabOptions): Promise<LocalStoreLab> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ss-${name}-`));
  let pgsrv: TestPostgres | undefined;
  try {
    pgsrv = await startTestPostgres();
    const db = o.database === undefined ? undefined : await pgsrv.database(o.database);
    const workdir = (t: string) => path.join(dir, `work-${t}`);
    const gate = o.fioGate ? fioGate(path.join(dir, 'fio-gate'), { open: true }) : undefined;
    const targets = ['targets:', ...o.targets.flatMap((t) => [`  ${t}:`, '    provider: local', `    workdir: ${workdir(t)}`, ...(gate ? [`    fioPath: ${gate.fioPath}`] : [])]), ''].join('\n');
    const file = (n: string, text: string) => {
      fs.writeFileSync(path.join(dir, n), text);
      return path.join(dir, n);
    };
    const srv = pgsrv;
    return {
      dir,
      pgsrv,
      get db(): TestDatabase {
        if (!db) throw new Error(`localStoreLab(${name}) made no database: pass { database }`);
        return db;
      },
      playbook: o.playbook === undefined ? path.join(dir, 'pb.yaml') : file('pb.yaml', o.playbook),
      inventory: file('inv.yaml', targets),
      storeInventory: db ? file('inv-store.yaml', `store: ${db.url}\n${targets}`) : path.join(dir, 'inv-store.yaml'),
      workdir,
      get gate(): FioGate {
        if (!gate) throw new Error(`localStoreLab(${name}) has no fio gate: pass { fioGate: true }`);
        return gate;
      },
      async stop() {
        await srv.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await pgsrv?.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** fio processes measuring in `workdir` (their command line names the test file there), on this machine. */
export function fioIn(workdir: string): number[] {
  const pids: number[] = [];
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('fio')) && argv.some((a) => a.includes(workdir))) pids.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return pids;
}
