// The embedded local lab's commands (see src/lab/main.ts for what the lab is): `up`, `down`,
// `status`, shared by `npm run lab` and `storsweep lab`.
import fs from 'node:fs';
import path from 'node:path';
import { stopPid } from './sshd.ts';
import { hasPostgresCluster } from './postgres.ts';
import { labUp, labPaths, readLabState, recordedLabState, labStatusJson, labPostgresDown, LabVersionMismatch } from './lab.ts';
import { isLabVersion, LAB_VERSIONS, type LabVersion } from './versions.ts';
import { listVcsimLuns } from './vsphere-inventory.ts';
import { releaseEsxiGuestDisks } from './harness/esxi/state.ts';
import { releaseLabLoops, stopLabProcesses } from './leftovers.ts';

/** Where the lab's messages go: the caller makes control characters visible (src/text/visible.ts). */
export interface LabOutput {
  out: (text: string) => void;
  errOut: (text: string) => void;
  /** how the user starts this command, for hints: `npm run lab --` or `storsweep lab` */
  invocation: string;
}

/**
 * `up|down|status` with their flags, for the lab in `<root>/.lab`: the one implementation behind
 * `npm run lab` (src/lab/main.ts) and `storsweep lab` (src/cli/commands/lab.ts). Resolves to the exit code.
 */
export async function labCommand(argv: readonly string[], root: string, io: LabOutput): Promise<number> {
  const { out, errOut } = io;
  const [cmd, ...rest] = argv;
  const json = rest.includes('--json');
  const paths = labPaths(root);
  switch (cmd) {
    case 'up': {
      let version: LabVersion | undefined;
      const at = rest.findIndex((a) => a === '--version' || a.startsWith('--version='));
      if (at >= 0) {
        const v = rest[at]!.includes('=') ? rest[at]!.slice('--version='.length) : rest[at + 1];
        if (!isLabVersion(v)) {
          errOut(`lab: --version ${v ?? ''}: expected one of ${Object.keys(LAB_VERSIONS).join(', ')}\n`);
          return 2;
        }
        version = v;
      }
      let state;
      try {
        state = await labUp(root, { vcsim: !rest.includes('--no-vcsim'), listLuns: (info) => listVcsimLuns(info), version, postgres: rest.includes('--postgres') });
      } catch (e) {
        if (!(e instanceof LabVersionMismatch)) throw e;
        errOut(`lab: ${e.message}\n`);
        return 2;
      }
      if (json) out(JSON.stringify(labStatusJson(root, state)) + '\n');
      else out(`lab up (ESXi/vCenter ${state.version ?? '8.0'}): ssh 127.0.0.1:${state.ssh.port}${state.vcsim ? `, vCenter ${state.vcsim.url}` : ''}${state.postgres ? `, PostgreSQL store 127.0.0.1:${state.postgres.port}` : ''}\ninventory: ${paths.inventory}\n`);
      return 0;
    }
    case 'down': {
      const purge = rest.includes('--purge');
      const state = readLabState(root);
      // the store: stopped (also when the rest of the lab is gone), its data kept unless --purge
      const pgDir = recordedLabState(root)?.postgres?.dir ?? path.join(paths.dir, 'postgres');
      const store = hasPostgresCluster(pgDir) ? pgDir : null;
      const storeDown = async () => {
        if (!store) return '';
        await labPostgresDown(store, { purge });
        return purge ? `; PostgreSQL store deleted (${path.relative(root, store)})` : `; PostgreSQL store stopped, its data kept in ${path.relative(root, store)} (\`up\` starts it again; \`down --purge\` deletes it)`;
      };
      if (state) {
        await stopPid(state.ssh.pid);
        if (state.vcsim) await stopPid(state.vcsim.pid);
      }
      // what the machine shows of this lab, whatever the state file says (a cut-short `up`, a lost
      // or stale state): its processes, the ESXi stand-ins' guest disks, every loop device on an
      // image inside .lab
      const stray = await stopLabProcesses(paths.dir);
      const esxiDisks = await releaseEsxiGuestDisks(paths.standinState);
      const loops = releaseLabLoops(paths.dir);
      const said = await storeDown();
      fs.rmSync(paths.state, { force: true });
      const found = [
        ...(stray.length ? [`stopped ${stray.length} lab process${stray.length === 1 ? '' : 'es'} (${stray.map((p) => p.pid).join(', ')})`] : []),
        ...([...new Set([...esxiDisks, ...loops.map((l) => l.device)])].length ? [`detached ${[...new Set([...esxiDisks, ...loops.map((l) => l.device)])].join(', ')}`] : []),
      ];
      out(`${state ? 'lab down' : 'lab was not running'}${found.length ? `; ${found.join('; ')}` : ''}${said}\n`);
      return 0;
    }
    case 'status': {
      const state = readLabState(root);
      if (!state) {
        if (json) out(JSON.stringify({ running: false, ssh: [], vcenter: null }) + '\n');
        else out(`lab is not running (${io.invocation} up)\n`);
        return state ? 0 : 1;
      }
      if (json) out(JSON.stringify(labStatusJson(root, state)) + '\n');
      else out(`version: ESXi/vCenter ${state.version ?? '8.0'}\nssh: 127.0.0.1:${state.ssh.port} (pid ${state.ssh.pid})\n${state.vcsim ? `vcenter: ${state.vcsim.url} (pid ${state.vcsim.pid})\n` : ''}inventory: ${path.relative(root, paths.inventory)}\n`);
      return 0;
    }
    default:
      errOut(`usage: ${io.invocation} up [--version 5.5|6.7|7.0|8.0] [--postgres]|down [--purge]|status [--json]\n`);
      return 2;
  }
}
