// Messages a tired user meets (issue 11, item 14), through the CLI: a damaged run.sqlite is named
// with what to do (exit 2) by every command that opens a run directory; the leftovers count is
// worded for one object and never counts a create that was never sent. (A bad `run --out` is
// covered by output-safety.test.ts.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planFor } from '../../src/app/config.ts';
import { ResultStore } from '../../src/results/store.ts';
import { runCli, stackTraceLines } from '../helpers/cli.ts';

let dir: string;

/** A run directory as `run` leaves it, without running anything: the quickstart plan on the local lab inventory. */
function makeRunDir(name: string): { runDir: string; store: ResultStore } {
  const runDir = path.join(dir, name);
  const plan = planFor('playbooks/quickstart.yaml', 'inventories/lab.yaml', 'rmsg0000', [], process.env);
  const store = ResultStore.create(
    runDir,
    {
      runId: plan.runId,
      playbook: plan.playbook,
      playbookFile: path.resolve('playbooks/quickstart.yaml'),
      inventoryFile: path.resolve('inventories/lab.yaml'),
      target: plan.target,
      startedAt: new Date().toISOString(),
      fingerprint: {},
      insecureEndpoints: [],
    },
    plan,
  );
  return { runDir, store };
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-messages-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a damaged run.sqlite', () => {
  it('every command that opens the run directory names the file and what to do, exit 2', async () => {
    const { runDir, store } = makeRunDir('damaged');
    store.close();
    const file = path.join(runDir, 'run.sqlite');
    // overwrite the schema area of the first page: SQLite says "database disk image is malformed"
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(200, 0x41), 0, 200, 100);
    fs.closeSync(fd);
    const expected =
      `${file}: the run's database is damaged (SQLite: database disk image is malformed). Keep a copy, then try to salvage it with ` +
      '`sqlite3 run.sqlite .recover | sqlite3 recovered.sqlite` and put recovered.sqlite in its place; the results of a finished run are also in results.jsonl next to it, which report and compare read once run.sqlite is moved aside\n';
    for (const args of [['status', runDir], ['results', runDir], ['report', runDir], ['cleanup', runDir], ['run', '--resume', runDir]]) {
      const r = await runCli(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: expected });
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
  });
});

describe('objects left behind', () => {
  it('status counts only what was sent and is not removed, in the singular for one', async () => {
    const { runDir, store } = makeRunDir('leftovers');
    const perm = store.permutations()[0]!.permutationId;
    // one create sent and done, one refused before it was sent: only the first is a leftover
    store.ledgerIntent(perm, 'vsphere', { kind: 'disk', name: `ss-rmsg0000-${perm}-disk` }, {});
    store.ledgerSent(perm, { kind: 'disk', name: `ss-rmsg0000-${perm}-disk` }, {});
    store.ledgerCreated(perm, { kind: 'disk', name: `ss-rmsg0000-${perm}-disk`, id: '[ds] ss.vmdk', provider: 'vsphere', data: {} });
    store.ledgerIntent(perm, 'vsphere', { kind: 'datastore', name: `ss-rmsg0000-${perm}-ds` }, {});
    store.ledgerState({ kind: 'datastore', name: `ss-rmsg0000-${perm}-ds` }, 'refused', 'refused by the guard');
    store.close();
    const r = await runCli(['status', runDir]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => /object/.test(l))).toEqual([`1 object this run created may still exist (storsweep cleanup ${runDir}):`]);
    expect(lines.filter((l) => l.includes('-ds'))).toEqual([]);
  });
});
