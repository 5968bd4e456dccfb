// `npm run lab -- up|down|status [--json]`: the embedded local lab. A real OpenSSH server on
// 127.0.0.1 acting as a Linux guest (fio on a scratch file) and as the ESXi-shell / Hyper-V test
// host (stand-ins on its PATH), and VMware's vCenter simulator (our vcsim harness). Everything
// lives under .lab/; `.lab/inventory.yaml` points playbooks at it.
import fs from 'node:fs';
import path from 'node:path';
import { stopPid } from './sshd.ts';
import { labUp, labPaths, readLabState, labStatusJson } from './lab.ts';
import { listVcsimLuns } from './vsphere-inventory.ts';
import { visibleText } from '../text/visible.ts';

// The lab's own entry point prints like the CLI: control characters from paths or tool messages
// shown, never sent to the terminal (src/text/visible.ts).
const out = (text: string) => process.stdout.write(visibleText(text));
const errOut = (text: string) => process.stderr.write(visibleText(text));

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  const json = rest.includes('--json');
  const root = process.cwd();
  const paths = labPaths(root);
  switch (cmd) {
    case 'up': {
      const state = await labUp(root, { vcsim: !rest.includes('--no-vcsim'), listLuns: (info) => listVcsimLuns(info) });
      if (json) out(JSON.stringify(labStatusJson(root, state)) + '\n');
      else out(`lab up: ssh 127.0.0.1:${state.ssh.port}${state.vcsim ? `, vCenter ${state.vcsim.url}` : ''}\ninventory: ${paths.inventory}\n`);
      return 0;
    }
    case 'down': {
      const state = readLabState(root);
      if (!state) {
        out('lab is not running\n');
        return 0;
      }
      await stopPid(state.ssh.pid);
      if (state.vcsim) await stopPid(state.vcsim.pid);
      fs.rmSync(paths.state, { force: true });
      out('lab down\n');
      return 0;
    }
    case 'status': {
      const state = readLabState(root);
      if (!state) {
        if (json) out(JSON.stringify({ running: false, ssh: [], vcenter: null }) + '\n');
        else out('lab is not running (npm run lab -- up)\n');
        return state ? 0 : 1;
      }
      if (json) out(JSON.stringify(labStatusJson(root, state)) + '\n');
      else out(`ssh: 127.0.0.1:${state.ssh.port} (pid ${state.ssh.pid})\n${state.vcsim ? `vcenter: ${state.vcsim.url} (pid ${state.vcsim.pid})\n` : ''}inventory: ${path.relative(root, paths.inventory)}\n`);
      return 0;
    }
    default:
      errOut('usage: npm run lab -- up|down|status [--json]\n');
      return 2;
  }
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (e) {
  errOut(`lab: ${(e as Error).message}\n`);
  process.exitCode = 1;
}
