// `worker --run ID` for a run the store does not hold: a plain "not found" at once (exit 2), not
// "still has work this worker could not prepare"; the id is shown escaped, never raw (a real
// PostgreSQL, test/helpers/local-store-lab.ts, and the real CLI).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStoreLab, type LocalStoreLab } from '../helpers/local-store-lab.ts';
import { runCli } from '../helpers/cli.ts';

let lab: LocalStoreLab;
beforeAll(async () => {
  lab = await localStoreLab('worker-not-found', { targets: ['here'], database: 'nf' });
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

describe('worker --run with an id the store does not hold', { timeout: 120_000 }, () => {
  it("'x;drop\\e[2J': not found, exit 2, the id escaped, nothing about work left", async () => {
    const out = path.join(lab.dir, 'out');
    const r = await runCli(['worker', '-i', lab.inventory, '--store', lab.db.url, '--run', 'x;drop\u001b[2J', '--until-idle', '--poll-ms', '100', '--out', out]);
    const display = `postgresql://storsweep@127.0.0.1:${lab.pgsrv.server.port}/${lab.db.name}`;
    expect(r.stderr).toBe(`run x;drop\\x1b[2J not found in ${display}; \`storsweep status --store URL\` lists the runs it holds\n`);
    expect(r.code).toBe(2);
    // refused before the worker started: no worker log
    expect(fs.existsSync(out) ? fs.readdirSync(out) : []).toEqual([]);
  });
});
