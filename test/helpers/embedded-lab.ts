// The embedded lab (`npm run lab -- up`: src/lab/lab.ts labUp) in a temp root of its own, for the
// tests of one file: started in its beforeAll, stopped (simulator, sshd) and removed in its afterAll.
// The root is readable by all: the Linux lab guest is a local user whose work directory is under it.
//
//   const lab = useEmbeddedLab('ss-gtools-', { vcsim: true });
//   await runCli(['run', pb, '-i', labPaths(lab.root).inventory], { cwd: lab.root });
//   await lab.control.log();                     // the simulator's control endpoint
//   await probeOne(await lab.endpoint(), { op: 'about' });   // pyvmomi's view of the simulator
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { labPaths, labUp, type LabState } from '../../src/lab/lab.ts';
import { stopPid } from '../../src/lab/sshd.ts';
import { stopVcsimPid, vcsimControl, type VcsimControl } from '../../src/lab/vcsim.ts';
import { runCli, type CliResult } from './cli.ts';
import type { ProbeEndpoint } from './pyvmomi-probe.ts';

export interface EmbeddedLab {
  /** the directory the lab's `.lab/` is in (labPaths(root)), and the CLI's cwd */
  readonly root: string;
  readonly state: LabState;
  /** the simulator's control endpoint (a lab started with `vcsim: true`) */
  readonly control: VcsimControl;
  /** the simulator as pyvmomi logs in to it (its password read from the lab's file) */
  endpoint(): Promise<ProbeEndpoint>;
}

export function useEmbeddedLab(prefix: string, opts: Parameters<typeof labUp>[1]): EmbeddedLab {
  let root: string | undefined;
  let state: LabState | undefined;
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    await fs.chmod(root, 0o755);
    state = await labUp(root, opts);
  }, 300_000);
  afterAll(async () => {
    if (state?.vcsim) await stopVcsimPid(state.vcsim.pid);
    if (state) await stopPid(state.ssh.pid);
    if (root) await fs.rm(root, { recursive: true, force: true });
  }, 120_000);
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useEmbeddedLab: ${what} read before its beforeAll ran`);
    return v;
  };
  let control: VcsimControl | undefined;
  return {
    get root() {
      return ready(root, 'root');
    },
    get state() {
      return ready(state, 'state');
    },
    get control() {
      const vcsim = ready(state, 'control').vcsim;
      if (!vcsim) throw new Error('useEmbeddedLab: the lab was started without vcsim');
      return (control ??= vcsimControl({ url: vcsim.url, certFile: vcsim.certFile }));
    },
    async endpoint() {
      const vcsim = ready(state, 'endpoint').vcsim;
      if (!vcsim) throw new Error('useEmbeddedLab: the lab was started without vcsim');
      const password = (await fs.readFile(labPaths(ready(root, 'root')).vcsimPassword, 'utf8')).trim();
      return { url: vcsim.url, username: vcsim.username, password, certFile: vcsim.certFile };
    },
  };
}

/**
 * Runs a playbook on the lab's inventory through the CLI (cwd: the lab's root, --json): its
 * result, its run directory and the records of its results.jsonl (none when it wrote no run).
 */
export async function runLabPlaybook<R>(root: string, file: string, o: { extra?: string[]; onSpawn?: (pid: number) => void; timeoutMs?: number } = {}): Promise<{ cli: CliResult; runDir: string; records: R[] }> {
  const cli = await runCli(['run', file, '-i', labPaths(root).inventory, '--json', ...(o.extra ?? [])], { cwd: root, timeoutMs: o.timeoutMs ?? 300_000, ...(o.onSpawn ? { onSpawn: o.onSpawn } : {}) });
  const last = cli.stdout.trim().split('\n').pop() ?? '{}';
  let runDir = '';
  try {
    runDir = path.resolve(root, (JSON.parse(last) as { runDir?: string }).runDir ?? '');
  } catch {
    runDir = '';
  }
  const text = runDir ? await fs.readFile(path.join(runDir, 'results.jsonl'), 'utf8').catch(() => '') : '';
  return { cli, runDir, records: text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as R) };
}
