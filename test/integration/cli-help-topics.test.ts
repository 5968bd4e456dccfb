// Conventions of mature CLIs (gh, kubectl, govc, terraform) that storsweep lacked (issue 31 item 4),
// through the CLI as a user runs it: `help WORD` for a word that is no command says so and names
// the nearest command (as `storsweep valdate` does), instead of printing the whole help as an
// error; `--no-color` is taken (terraform's -no-color, npm's --no-color) as `--color never`.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('help WORD', () => {
  it('for a command: its help on stdout, exit 0', async () => {
    const r = await runCli(['help', 'validate']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: storsweep validate /);
  });

  it('for a word that is no command: refused with the nearest command, and nothing else printed', async () => {
    const typo = await runCli(['help', 'valdate']);
    expect(typo.code).toBe(2);
    expect(typo.stdout).toBe('');
    expect(typo.stderr).toBe('help: no command "valdate" (did you mean "validate"?); `storsweep --help` lists the commands\n');
    const far = await runCli(['help', 'xyzzy\u001b[31m']);
    expect(far.code).toBe(2);
    // nothing from input reaches a terminal raw
    expect(far.stderr).not.toContain('\u001b');
    expect(far.stderr).toMatch(/^help: no command "xyzzy.*"; `storsweep --help` lists the commands\n$/);
  });
});

describe('--no-color', () => {
  it('turns colour off as --color never does, where FORCE_COLOR would turn it on', async () => {
    const forced = { NO_COLOR: undefined, FORCE_COLOR: '1' };
    expect((await runCli(['validate', '--help'], { env: forced })).stdout).toContain('\x1b[1mUsage:');
    const off = await runCli(['--no-color', 'validate', '--help'], { env: forced });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/^Usage: storsweep validate /);
    expect(off.stdout).not.toContain('\x1b');
    // also after the command, and with a command that runs
    const ran = await runCli(['validate', 'playbooks/quickstart.yaml', '--no-color'], { env: forced });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe('playbooks/quickstart.yaml: ok\n');
  });
});
