// fio held at a gate the test opens: a measurement under way (its process started by the run, the
// disk or test file in use, the permutation's lease held) for exactly as long as the test needs,
// however slow the machine — instead of a runtime long enough for what the test does meanwhile,
// which a loaded machine outlasts (or a short one it does not reach in time). The gate is a wrapper
// named fio that waits for the gate's `open` file, then execs the real fio with the same arguments
// in the same process (the run's stopper finds and signals it like fio: it carries the run's
// environment token). `fio --version` and other queries pass at once. A wrapper whose gate
// directory is removed (the test's temp dir) exits without running fio.
//
//   const gate = fioGate(path.join(dir, 'gate'));   // closed
//   inventory `fioPath: ${gate.fioPath}`, or a CLI started with { env: gate.env } (fioPath `fio`)
//   await waitFor(() => gate.held().length >= 1, { what: 'fio at the gate' });
//   ...                                              // act while it measures
//   gate.open();                                     // it, and every later one, runs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface HeldFio {
  pid: number;
  /** the arguments fio was given */
  args: string[];
}

export interface FioGate {
  /** the wrapper, for an inventory's `fioPath` */
  fioPath: string;
  /** for a CLI whose targets run `fio` from PATH: PATH with the wrapper's directory first */
  env: Record<string, string>;
  /** the fio processes waiting at the gate now */
  held(): HeldFio[];
  /** lets every fio held, and every later one, run */
  open(): void;
  /** holds every later fio (one already past the gate runs on) */
  close(): void;
}

/** A gate in directory `dir` (created), closed unless `open`. */
export function fioGate(dir: string, o: { open?: boolean } = {}): FioGate {
  if (/['\n]/.test(dir)) throw new Error(`fioGate: ${JSON.stringify(dir)}: a quote or newline in the path`);
  const realFio = execFileSync('sh', ['-c', 'command -v fio'], { encoding: 'utf8' }).trim();
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const fioPath = path.join(bin, 'fio');
  const openFile = path.join(dir, 'open');
  fs.writeFileSync(
    fioPath,
    [
      '#!/bin/sh',
      '# fio held at a test\'s gate (test/helpers/fio-gate.ts)',
      `gate='${dir}'`,
      `case "$1" in --version|--help|--enghelp*|--cmdhelp*) exec '${realFio}' "$@";; esac`,
      'if [ ! -e "$gate/open" ]; then',
      '  : > "$gate/held.$$"',
      '  while [ ! -e "$gate/open" ]; do',
      '    [ -d "$gate" ] || exit 1',
      '    sleep 0.02',
      '  done',
      '  rm -f "$gate/held.$$"',
      'fi',
      `exec '${realFio}' "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const gate: FioGate = {
    fioPath,
    env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
    held: () => {
      const out: HeldFio[] = [];
      for (const f of fs.readdirSync(dir).filter((x) => /^held\.\d+$/.test(x))) {
        const pid = Number(f.slice('held.'.length));
        let argv: string[];
        try {
          argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
        } catch {
          continue; // stopped (its file stays when it is killed)
        }
        // the same pid taken by another process since: not ours
        const at = argv.indexOf(fioPath);
        if (at >= 0) out.push({ pid, args: argv.slice(at + 1) });
      }
      return out;
    },
    open: () => fs.writeFileSync(openFile, ''),
    close: () => fs.rmSync(openFile, { force: true }),
  };
  if (o.open) gate.open();
  return gate;
}
