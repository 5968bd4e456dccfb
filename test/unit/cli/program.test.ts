// src/cli/program.ts: commands are registered lazily, each from its own module. The table of which
// module registers which command must match what the modules register (a command missing from it
// would be loaded only with --help); the environment variables and examples reach every command.
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram, commandName, COMMANDS, modulesFor, programArgv } from '../../../src/cli/program.ts';

const names = (p: { commands: readonly { name(): string }[] }) => p.commands.map((c) => c.name()).sort();

describe('lazy command registration', () => {
  it('COMMANDS names exactly the commands the modules register', async () => {
    const all = await buildProgram([]);
    expect(names(all)).toEqual(Object.keys(COMMANDS).sort());
  });

  it('a command loads its own module only: the commands registered are that module\'s', async () => {
    const byModule = new Map<string, string[]>();
    for (const [name, mod] of Object.entries(COMMANDS)) byModule.set(mod, [...(byModule.get(mod) ?? []), name]);
    for (const [name, mod] of Object.entries(COMMANDS)) {
      const p = await buildProgram([name, '--help']);
      expect(names(p), name).toEqual(byModule.get(mod)!.sort());
    }
  });

  it('--version loads no command; --help, no command or an unknown one load them all', () => {
    expect(modulesFor(['--version'])).toEqual([]);
    expect(modulesFor(['-V'])).toEqual([]);
    expect(modulesFor(['--max-input-size', '8m', 'validate', 'x.yaml'])).toEqual(['config']);
    expect(modulesFor(['--color', 'never', 'lab', 'up'])).toEqual(['lab']);
    expect(modulesFor([]).length).toBe(new Set(Object.values(COMMANDS)).size);
    expect(modulesFor(['--help']).length).toBe(new Set(Object.values(COMMANDS)).size);
    expect(modulesFor(['valdate']).length).toBe(new Set(Object.values(COMMANDS)).size);
    expect(commandName(['--max-input-size', 'run', 'plan'])).toBe('plan');
  });

  it('`lab … --version X` is the lab\'s release, not the program\'s version', () => {
    expect(programArgv(['node', 'storsweep', 'lab', 'up', '--version', '7.0'])).toEqual(['node', 'storsweep', 'lab', 'up', '--lab-version', '7.0']);
    expect(programArgv(['node', 'storsweep', 'lab', 'up', '--version=5.5'])).toEqual(['node', 'storsweep', 'lab', 'up', '--lab-version=5.5']);
    expect(programArgv(['node', 'storsweep', 'validate', '--version'])).toEqual(['node', 'storsweep', 'validate', '--version']);
  });
});

describe('help and environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('every command has an example, and -i/--store/--out name their environment variable', async () => {
    const all = await buildProgram([]);
    for (const c of all.commands.filter((x) => !x.name().startsWith('__'))) {
      const help = c.helpInformation() + (await helpAfter(c));
      expect(help, c.name()).toMatch(/Example:\n {2}\$ storsweep /);
      for (const [flag, env] of [['--inventory', 'STORSWEEP_INVENTORY'], ['--store', 'STORSWEEP_STORE'], ['--out', 'STORSWEEP_OUT']] as const) {
        if (c.options.some((o) => o.long === flag)) expect(c.helpInformation().replace(/\s+/g, ' '), `${c.name()} ${flag}`).toMatch(new RegExp(`(\\(|, )env: ${env}\\)`));
      }
    }
  });

  it('STORSWEEP_OUT gives run --out, an empty one is unset, the command line wins', async () => {
    const outOf = async (argv: string[], env: Record<string, string>) => {
      process.env = { ...saved, ...env };
      const p = await buildProgram(argv);
      const run = p.commands.find((c) => c.name() === 'run')!;
      run.action(() => undefined);
      await p.parseAsync(['node', 'storsweep', ...argv]);
      return [run.opts<{ out: string }>().out, run.getOptionValueSource('out')];
    };
    expect(await outOf(['run', 'x.yaml'], { STORSWEEP_OUT: '/srv/runs' })).toEqual(['/srv/runs', 'env']);
    expect(await outOf(['run', 'x.yaml'], { STORSWEEP_OUT: '' })).toEqual(['runs', 'default']);
    expect(await outOf(['run', 'x.yaml', '-o', 'mine'], { STORSWEEP_OUT: '/srv/runs' })).toEqual(['mine', 'cli']);
  });
});

/** The text a command adds after its help (addHelpText 'after'), as commander writes it. */
async function helpAfter(c: { outputHelp(): void; configureOutput(o: object): unknown }): Promise<string> {
  let text = '';
  c.configureOutput({ writeOut: (s: string) => (text += s), writeErr: (s: string) => (text += s) });
  c.outputHelp();
  return Promise.resolve(text);
}
