// Numbers out of range and provider values the host would refuse stop `run` before it connects to
// anything: the "host" here is a TCP listener that counts connections, so a refusal is proven by
// zero connections and no run directory, and a positive control proves the same run does connect.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';

let dir: string;
let server: net.Server;
let connections = 0;

const PLAYBOOK = `name: ranges
target: hv
matrix:
  volume:
    sizeGb: [100]
  disk:
    format: [vhdx-dynamic]
    sizeGb: [1]
  workload:
    profile: [cdm5]
`;

function inventory(port: number, vmName = 'bench-vm'): string {
  return `sshHosts:
  hv:
    host: 127.0.0.1
    port: ${port}
    user: bench
    password: \${env:RANGES_HOST_PASSWORD}
    insecure: true
    shell: powershell
targets:
  hv:
    provider: hyperv
    sshHost: hv
    vmName: ${JSON.stringify(vmName)}
    volumes: { "100": 'D:\\bench' }
    guestCredential: { username: u, password: "\${env:RANGES_HOST_PASSWORD}" }
`;
}

const write = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const env = { RANGES_HOST_PASSWORD: 'not-a-real-password' };
const runsIn = (out: string) => (fs.existsSync(out) ? fs.readdirSync(out) : []);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-ranges-'));
  server = net.createServer((sock) => {
    connections++;
    sock.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('run refuses bad numbers and provider values before it connects', () => {
  it('--step-timeout 3000000 / -5 / abc / 0 and --retries -1: exit 2 with the range, nothing sent, no run directory', async () => {
    const port = (server.address() as net.AddressInfo).port;
    const pb = write('pb.yaml', PLAYBOOK);
    const inv = write('inv.yaml', inventory(port));
    const out = path.join(dir, 'runs-options');
    const cases: Array<[string[], string]> = [
      [['--step-timeout', '3000000'], `--step-timeout: expected whole seconds from 1 to 2147483 (Node's timer limit), got "3000000"`],
      [['--step-timeout', '-5'], `--step-timeout: expected whole seconds from 1 to 2147483 (Node's timer limit), got "-5"`],
      [['--step-timeout', 'abc'], `--step-timeout: expected whole seconds from 1 to 2147483 (Node's timer limit), got "abc"`],
      [['--step-timeout', '0'], `--step-timeout: expected whole seconds from 1 to 2147483 (Node's timer limit), got "0"`],
      [['--retries', '-1'], '--retries: expected a number of retries from 0 to 20, got "-1"'],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(['run', pb, '-i', inv, '-o', out, ...flags], { env });
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.stderr).toBe(`${message}\n`);
      expect(stackTraceLines(r.stderr)).toEqual([]);
    }
    expect(connections).toBe(0);
    expect(runsIn(out)).toEqual([]);

    // Positive control: the same run with an allowed timeout gets as far as the host (and fails there).
    const ok = await runCli(['run', pb, '-i', inv, '-o', out, '--step-timeout', '60', '--retries', '0'], { env, timeoutMs: 60_000 });
    expect(ok.code).not.toBe(2);
    expect(connections).toBeGreaterThan(0);
    expect(runsIn(out)).toHaveLength(1);
  });

  it('timeouts.workloadSlackSec: 3000000 is refused at file:line:col; nothing sent', async () => {
    connections = 0;
    const port = (server.address() as net.AddressInfo).port;
    const pb = write('pb-slack.yaml', `${PLAYBOOK}timeouts:\n  workloadSlackSec: 3000000\n`);
    const inv = write('inv-slack.yaml', inventory(port));
    const out = path.join(dir, 'runs-slack');
    const r = await runCli(['run', pb, '-i', inv, '-o', out], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${pb}:12:21: timeouts.workloadSlackSec: expected whole seconds from 1 to 86400 (a day per pass at most); got 3000000\n`);
    expect(connections).toBe(0);
    expect(runsIn(out)).toEqual([]);
  });

  it('a Hyper-V vmName with a wildcard is refused by validate and by run at file:line:col; nothing sent', async () => {
    connections = 0;
    const port = (server.address() as net.AddressInfo).port;
    const pb = write('pb-vm.yaml', PLAYBOOK);
    const inv = write('inv-vm.yaml', inventory(port, 'bench*'));
    const expected = `${inv}:13:13: targets.hv.vmName: expected a VM name of letters, digits, space, ".", "_" and "-" (max 100, starting with a letter or digit; no wildcards)\n`;
    const v = await runCli(['validate', pb, '-i', inv], { env });
    expect(v.code).toBe(2);
    expect(v.stderr).toBe(expected);
    const out = path.join(dir, 'runs-vm');
    const r = await runCli(['run', pb, '-i', inv, '-o', out], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(expected);
    expect(connections).toBe(0);
    expect(runsIn(out)).toEqual([]);
  });
});
