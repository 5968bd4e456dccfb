// A run refused before it measures anything logs out the vCenter session its checks opened (issue
// 29): the capacity gate reads the LUN through the run's pooled session, and a refusal used to leave
// that session open on the server. Read back from outside: the simulator's
// SessionManager.sessionList through pyvmomi, and the harness's call log (each session that called
// anything also called Logout). `run --preflight` and `preflight` are held to the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { quickSettings } from '../helpers/quick-settings.ts';
import { startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

let lab: VsphereLab;
let tooBig: string;

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
  // a 100 GiB eager-zeroed thick disk on the harness LUN the plan formats: larger than the LUN
  tooBig = await lab.writePlaybook('too-big.yaml', ['name: too-big', 'target: lab-vcenter', 'matrix:', '  datastore: {kind: [vmfs6]}', '  disk: {format: [eagerzeroedthick], sizeGb: [100]}', '  workload: {profile: [quick]}', 'workloads:', '  quick:', '    iometer: "4k 100% read 100% random"', ...quickSettings(), ''].join('\n'));
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});

/** The keys of the sessions the server holds for storsweep's client (its User-Agent), this probe's own left out. */
async function storsweepSessions(): Promise<string[]> {
  const r = await probeOne({ url: lab.sim.url, username: lab.sim.username, password: lab.password, certFile: lab.sim.certFile }, { op: 'sessions' });
  expect(r.ok, r.message).toBe(true);
  return (r.sessions as Array<{ key: string; userAgent: string }>).filter((s) => s.userAgent === 'storsweep').map((s) => s.key);
}

/** The sessions of ours the server holds now that it did not hold at `before`. */
const openedSince = async (before: readonly string[]) => (await storsweepSessions()).filter((k) => !before.includes(k));

/** Sessions in the call log that called something and never Logout (read before the probe logs in). */
async function sessionsNotLoggedOut(): Promise<string[]> {
  const log = await lab.sim.control.log();
  const used = new Set(log.filter((e) => e.session).map((e) => e.session!));
  const out = new Set(log.filter((e) => e.method === 'Logout' && e.session).map((e) => e.session!));
  expect(used.size).toBeGreaterThan(0);
  return [...used].filter((s) => !out.has(s));
}

describe('a refused run leaves no vCenter session of ours', () => {
  it('run refused by the capacity gate (exit 2): its session is logged out', async () => {
    const before = await storsweepSessions();
    await lab.sim.control.reset();
    const r = await runCli(['run', tooBig, ...lab.runArgs(await lab.newRunsDir('gate'))]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('refusing to run: target lab-vcenter: LUN');
    const log = await lab.sim.control.log();
    // the gate read the LUN through a session of its own login: the refusal was not before any session
    expect(log.map((e) => e.method)).toContain('Login');
    expect(log.map((e) => e.method)).not.toContain('CreateVmfsDatastore');
    expect(await sessionsNotLoggedOut()).toEqual([]);
    expect(await openedSince(before)).toEqual([]);
  }, 120_000);

  it('run --preflight stopped on a ✗ (exit 2): no session left', async () => {
    const before = await storsweepSessions();
    await lab.sim.control.reset();
    const r = await runCli(['run', tooBig, ...lab.runArgs(await lab.newRunsDir('preflight-run')), '--preflight']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('run --preflight: a check failed');
    expect(await sessionsNotLoggedOut()).toEqual([]);
    expect(await openedSince(before)).toEqual([]);
  }, 120_000);

  it('preflight with a ✗ (exit 1): no session left', async () => {
    const before = await storsweepSessions();
    await lab.sim.control.reset();
    const r = await runCli(['preflight', tooBig, '-i', lab.inventory, '--json', '--no-canary', '-o', await lab.newRunsDir('preflight')]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('has room for');
    expect(await sessionsNotLoggedOut()).toEqual([]);
    expect(await openedSince(before)).toEqual([]);
  }, 120_000);
});

it('the probe sees a session storsweep leaves open: the check can fail', async () => {
  // a login of our client that is never logged out, as the refused run's used to be
  const before = await storsweepSessions();
  const c = await lab.connect();
  expect(await openedSince(before)).toHaveLength(1);
  await c.logout();
  expect(await openedSince(before)).toEqual([]);
}, 60_000);
