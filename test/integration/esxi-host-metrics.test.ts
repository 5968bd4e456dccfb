// The ESXi-shell provider's fingerprint and its view of a test from the host, through a real OpenSSH
// server whose sessions find the strict ESXi stand-ins (src/lab/harness/esxi) first on PATH.
// THE ESXTOP FIGURES ARE SYNTHETIC (the stand-in makes them up): this proves the capture — started in
// the background, stopped by its pid, parsed, its file removed — and the columns read, not a number.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureKeyPair, startSshd, type SshdHandle } from '../../src/lab/sshd.ts';
import type { EsxiShellTargetConfig } from '../../src/providers/esxi-shell/config.ts';
import { createEsxiShellProvider } from '../../src/providers/esxi-shell/provider.ts';
import type { HostMetrics } from '../../src/contract/host-metrics.ts';
import type { ProviderContext } from '../../src/contract/provider.ts';
import { connectSsh } from '../../src/ssh/ssh-runner.ts';
import { BLANK_DEV, defaultEsxiState, ESXI_HARNESS_DIR, readCommands, RDM_DEV, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import { waitFor } from '../helpers/wait.ts';

let dir: string;
let stateDir: string;
let sshd: SshdHandle;
let keyPath: string;
let knownHosts: string;
const ctx: ProviderContext = { runId: 'rhm1', permutationId: 'p1', axes: {}, owner: 'rhm1t0a1b2c3d', signal: new AbortController().signal, log: () => undefined, sent: () => undefined };
const target: EsxiShellTargetConfig = { host: 'esx-standin', vmid: '1', vmfsDevice: BLANK_DEV, rdmDevice: RDM_DEV, allowedDevices: [BLANK_DEV, RDM_DEV] };

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-esxhm-'));
  stateDir = path.join(dir, 'state');
  await seedEsxiState(stateDir);
  const key = await ensureKeyPair(path.join(dir, 'client_key'));
  keyPath = key.privateKeyPath;
  const bin = path.join(dir, 'esxi-bin');
  await fs.cp(ESXI_HARNESS_DIR, bin, { recursive: true, filter: (src) => !src.includes('__pycache__') });
  sshd = await startSshd({ dir: path.join(dir, 'sshd'), authorizedKeys: [key.publicKey], pathPrefix: [bin], env: { STORSWEEP_STANDIN_STATE: stateDir } });
  knownHosts = path.join(dir, 'known_hosts');
  await fs.writeFile(knownHosts, sshd.knownHostsLine + '\n');
});

afterAll(async () => {
  await sshd?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

/** the command lines of the lab host's processes that `keep` accepts (read from /proc: the stand-in ps offers only ESXi's -c) */
async function commandLines(keep: (line: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const line = (await fs.readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
    if (keep(line)) out.push(line);
  }
  return out;
}

const runner = () => connectSsh({ host: sshd.host, port: sshd.port, username: os.userInfo().username, privateKeyPath: keyPath, knownHostsFile: knownHosts });

describe('esxi-shell fingerprint', () => {
  it('records host product and build (esxcli system version get) and the VM\'s guest OS and VMware Tools (vim-cmd vmsvc/get.guest)', async () => {
    const product = (defaultEsxiState() as { product: { version: string; build: string } }).product;
    const p = createEsxiShellProvider(target, await runner());
    try {
      const facts = await p.describe!();
      expect(facts['esxi.product']).toBe(`VMware ESXi ${product.version}`);
      expect(facts['esxi.build']).toBe(product.build);
      expect(facts['vmwareTools.version']).toBe('12352');
      expect(facts['vmwareTools.runningStatus']).toBe('guestToolsRunning');
      expect(facts['vm.guestFullName']).toMatch(/Linux/);
      const cmds = (await readCommands(stateDir)).map((c) => [c.tool, ...c.argv].join(' '));
      expect(cmds).toContain('esxcli system version get');
      expect(cmds).toContain('vim-cmd vmsvc/get.guest 1');
    } finally {
      await p.close();
    }
  });
});

describe('esxtop -b over a test (synthetic values)', () => {
  it('captures the span, reads DAVG/KAVG/GAVG/QAVG of the LUN under test, stops its own esxtop and removes its file', async () => {
    const p = createEsxiShellProvider(target, await runner());
    try {
      const observer = p.observeHost!([{ kind: 'datastore', name: 'ss-x-p1-ds', provider: 'esxi-shell', id: 'ss-x-p1-ds', data: { device: BLANK_DEV } }], ctx)!;
      expect(observer.source).toBe('esxtop');
      const obs = await observer.start(ctx.signal);
      // the test spans at least one esxtop update: its first row is in the capture file (header, then rows)
      // (the capture is /tmp/storsweep-esxtop-<owner>-<nonce>.csv beside its pidfile)
      const capture = async () => (await fs.readdir('/tmp')).find((f) => f.startsWith(`storsweep-esxtop-${ctx.owner}-`) && f.endsWith('.csv'));
      await waitFor(async () => {
        const f = await capture();
        return f !== undefined && (await fs.readFile(path.join('/tmp', f), 'utf8').catch(() => '')).split('\n').filter(Boolean).length >= 2;
      }, { what: `an esxtop update in /tmp/storsweep-esxtop-${ctx.owner}-*.csv` });
      const host: HostMetrics = await obs.stop(ctx.signal);
      expect(host.source).toBe('esxtop');
      expect(host.intervalSec).toBe(2);
      expect(host.samples).toBeGreaterThan(0);
      const e = host.esxtop!;
      expect(e.device).toBe(BLANK_DEV);
      for (const v of [e.davgMs, e.kavgMs, e.gavgMs, e.qavgMs]) expect(v).toEqual(expect.any(Number));
      // GAVG = DAVG + KAVG, QAVG part of KAVG (the stand-in writes two decimals)
      expect(Math.abs(e.gavgMs! - (e.davgMs! + e.kavgMs!))).toBeLessThan(0.02);
      expect(e.qavgMs!).toBeLessThanOrEqual(e.kavgMs! + 1e-9);
      expect(host.latencyUs).toBeCloseTo(e.gavgMs! * 1000, 6);
      const cmds = (await readCommands(stateDir)).filter((c) => c.tool === 'esxtop');
      expect(cmds.at(-1)!.argv).toEqual(['-b', '-d', '2', '-n', '3600']);
      // its esxtop is gone (the lab host's /proc) and its files too
      const ours = path.join(dir, 'esxi-bin', 'esxtop');
      expect(await commandLines((l) => l.includes(`${ours} -b`))).toEqual([]);
      expect((await fs.readdir('/tmp')).filter((f) => f.startsWith('storsweep-esxtop-rhm1t0a1b2c3d-'))).toEqual([]);
    } finally {
      await p.close();
    }
  }, 60_000);

  it('the stand-in refuses what esxtop refuses: no batch mode, a delay under 2 s, an unknown option', async () => {
    const r = await runner();
    try {
      for (const cmd of ['esxtop -n 1', 'esxtop -b -d 1 -n 1', 'esxtop -b -x', 'esxtop -b -n']) {
        const res = await r.run(cmd);
        expect(res.exitCode, cmd).toBe(1);
        expect(res.stderr, cmd).toMatch(/usage: esxtop/);
      }
    } finally {
      await r.close();
    }
  });
});
