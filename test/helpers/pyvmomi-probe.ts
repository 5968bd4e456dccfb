// pyVmomi (Debian's python3-pyvmomi) as an independent vSphere client for tests:
// test/harness/pyvmomi/probe.py runs a list of operations against a simulator (or any vCenter/ESXi
// endpoint) and prints one result per operation, `{ok: false, fault}` for a fault it met.
//
//   const [about] = await probe(vc, [{ op: 'about' }]);
//   const r = await probeOne(vc, { op: 'luns', host: 'DC0_H0' });
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('../harness/pyvmomi/probe.py', import.meta.url));

export type ProbeResult = { ok: boolean; fault?: string; message?: string } & Record<string, unknown>;

/** Where to connect: a simulator handle, or its fields (`certFile`: the CA to trust). */
export interface ProbeEndpoint {
  url: string;
  username: string;
  password: string;
  certFile: string;
}

/** Runs `ops` in one pyVmomi session (`creds`: another login than the endpoint's). */
export function probe(vc: ProbeEndpoint, ops: Record<string, unknown>[], creds?: { username: string; password: string }): Promise<ProbeResult[]> {
  const input = JSON.stringify({ url: vc.url, username: creds?.username ?? vc.username, password: creds?.password ?? vc.password, certFile: vc.certFile, ops });
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', [PROBE], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`probe.py exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out) as ProbeResult[]);
      } catch {
        reject(new Error(`probe.py printed non-JSON: ${out}\n${err}`));
      }
    });
    child.stdin.end(input);
  });
}

/** One operation's result. */
export async function probeOne(vc: ProbeEndpoint, op: Record<string, unknown>): Promise<ProbeResult> {
  const [r] = await probe(vc, [op]);
  if (!r) throw new Error('probe returned no result');
  return r;
}
