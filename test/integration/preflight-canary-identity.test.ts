// preflight's canary both ways on the identity the guest gives a disk (issue 29): on the lab the VM's
// disks show up as wwn-0x<backing uuid> (the assumption storsweep makes about real hosts); with the
// harness told to present another identity (POST /_harness/guest-identity {"mode":"other"}: a host
// where that assumption does not hold), the canary fails with a ✗ that names the identity it
// expected and the one it saw, and still destroys what it created. Read back from outside: the
// harness's call log (each disk added and removed), pyvmomi (nothing of ours left), the guest's
// by-id directory, and the server's session list (no session of ours left open).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { diskPlaybook } from '../helpers/disk-playbook.ts';
import { probeOne } from '../helpers/pyvmomi-probe.ts';
import { NOTHING_LEFT, startVsphereLab, type VsphereLab } from '../helpers/vsphere-lab.ts';

interface Report {
  ok: boolean;
  targets: Array<{ target: string; checks: Array<{ check: string; status: string; detail: string; remedy?: string }> }>;
  canary?: {
    runDir: string;
    ok: boolean;
    permutations: Array<{ permutationId: string; status: string; identity?: string; error?: string; identityMismatch?: { object: string; sizeBytes: number; expected: { wwn: string; name: string }; seen: Array<{ name: string; wwn?: string; device: string }> } }>;
  };
}

let lab: VsphereLab;
let inventory: string;
let pb: string;

beforeAll(async () => {
  lab = await startVsphereLab({ version: '8.0' });
  // a guest that shows a disk within seconds or not at all: the canary waits 3 s, not the default 300
  inventory = path.join(lab.dir, 'inventory-wait.yaml');
  fs.writeFileSync(inventory, fs.readFileSync(lab.inventory, 'utf8').replace(/^( {6}byIdDir: .*)$/m, '$1\n      diskWaitSec: 3'));
  pb = await lab.writePlaybook('canary.yaml', diskPlaybook({ name: 'canary-id', target: 'lab-vcenter', format: 'thin' }));
}, 120_000);
afterAll(async () => {
  await lab?.stop();
});
beforeEach(async () => {
  // also sets the guest identity back to the backing uuid
  await lab.sim.control.reset();
});

const preflight = async (out: string) => {
  const r = await runCli(['preflight', pb, '-i', inventory, '--json', '-o', await lab.newRunsDir(out)], { timeoutMs: 300_000 });
  return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
};

/** The canary's disks as the call log shows them: each ReconfigVM_Task add and remove. */
async function diskChanges(): Promise<{ adds: string[]; removes: string[] }> {
  const changes = (await lab.sim.control.log()).flatMap((e) => e.devices ?? []);
  return { adds: changes.filter((d) => d.startsWith('add ')).map((d) => d.slice(4)), removes: changes.filter((d) => d.startsWith('remove ')).map((d) => d.slice(7)) };
}

async function storsweepSessions(): Promise<unknown[]> {
  const r = await probeOne({ url: lab.sim.url, username: lab.sim.username, password: lab.password, certFile: lab.sim.certFile }, { op: 'sessions' });
  expect(r.ok, r.message).toBe(true);
  return (r.sessions as Array<{ userAgent: string }>).filter((s) => s.userAgent === 'storsweep');
}

describe('the canary finds its disk by the identity the run will use', () => {
  it('the lab presents wwn-0x<backing uuid>: ✓ with that identity, exit 0, the disk created and removed', async () => {
    const { code, report, stderr } = await preflight('same');
    expect(code, stderr).toBe(0);
    const [p] = report.canary!.permutations;
    expect(p).toMatchObject({ status: 'done', identity: expect.stringMatching(/^wwn-0x6000c29[0-9a-f]{25}$/) });
    expect(p!.identityMismatch).toBeUndefined();
    const { adds, removes } = await diskChanges();
    expect(adds).toHaveLength(1);
    expect(removes).toEqual(adds);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
  }, 300_000);

  it('another identity: ✗ naming the one expected and the one seen, exit 1, and everything it created destroyed', async () => {
    await lab.sim.control.guestIdentity('other');
    const { code, report } = await preflight('other');
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const [p] = report.canary!.permutations;
    expect(p!.status).toBe('failed');
    const check = report.targets.find((t) => t.target === 'canary')!.checks.find((c) => c.check === `canary ${p!.permutationId}`)!;
    expect(check.status).toBe('fail');
    const expected = /Expected wwn-0x([0-9a-f]{32});/.exec(check.detail)?.[1];
    const seen = /the guest shows a disk of that size \(1073741824 bytes\) as wwn-0x([0-9a-f]{32}) \(\/dev\/loop\d+\)/.exec(check.detail)?.[1];
    expect(expected, check.detail).toMatch(/^6000c29/);
    expect(seen, check.detail).toBeDefined();
    expect(seen).not.toBe(expected);
    // the id the harness presents for that disk (its README): 6000c29 + 25 hex of sha256(uuid hex)
    expect(seen).toBe('6000c29' + createHash('sha256').update(expected!).digest('hex').slice(0, 25));
    // the same as fields, for a script: the object, the identity expected and the one seen
    expect(p!.identityMismatch).toEqual({
      object: expect.stringMatching(/\.vmdk$/),
      sizeBytes: 1073741824,
      expected: { wwn: expected, name: `wwn-0x${expected}` },
      seen: [{ name: `wwn-0x${seen}`, wwn: seen, device: expect.stringMatching(/^\/dev\/loop\d+$/) }],
    });
    expect(check.detail).toContain(p!.identityMismatch!.object);
    // what the canary created went through teardown as a run's does
    const { adds, removes } = await diskChanges();
    expect(adds).toHaveLength(1);
    expect(adds[0]).toContain(`ss-${path.basename(report.canary!.runDir).replace(/^preflight-canary-/, '')}-`);
    expect(removes).toEqual(adds);
    expect(await lab.leftovers()).toEqual(NOTHING_LEFT);
    expect(fs.readdirSync(lab.byIdDir)).toEqual([]);
    expect(await storsweepSessions()).toEqual([]);
  }, 300_000);
});
