// `npm run lab -- up [--version 5.5|6.7|7.0|8.0] [--postgres]|down [--purge]|status [--json]`: the embedded local lab. A real OpenSSH server on
// 127.0.0.1 acting as a Linux guest (fio on a scratch file) and as the ESXi-shell / Hyper-V test
// host (stand-ins on its PATH), and VMware's vCenter simulator (our vcsim harness). Everything
// lives under .lab/; `.lab/inventory.yaml` points playbooks at it. `--version` makes the simulator
// and the ESXi stand-ins act as that release (default 8.0, or the running lab's): what they report and
// which VMFS versions they create (src/lab/harness/vcsim/version.go, harness/esxi/esxi_state.py).
// The PostgreSQL store's data (.lab/postgres: the runs stored there) outlives `down` and reboots;
// only `down --purge` deletes it.
import { labCommand } from './command.ts';
import { visibleText } from '../text/visible.ts';

// The lab's own entry point prints like the CLI: control characters from paths or tool messages
// shown, never sent to the terminal (src/text/visible.ts).
const out = (text: string) => process.stdout.write(visibleText(text));
const errOut = (text: string) => process.stderr.write(visibleText(text));

try {
  process.exitCode = await labCommand(process.argv.slice(2), process.cwd(), { out, errOut, invocation: 'npm run lab --' });
} catch (e) {
  errOut(`lab: ${(e as Error).message}\n`);
  process.exitCode = 1;
}
