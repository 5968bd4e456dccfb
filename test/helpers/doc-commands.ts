// What the docs say a user can type, read out of Markdown, and what `--help` says exists: the two
// sides test/unit/docs.test.ts compares so the docs cannot drift from the CLI (issue 28, item 4).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/** The CLI as `--help` describes it: each command's options, and the options every command takes. */
export interface CliHelp {
  commands: Map<string, Set<string>>;
  global: Set<string>;
}

/** Option names (`--store`, `-i`) in the "Options:" part of a commander help text. */
export function optionsOf(help: string): Set<string> {
  const part = help.split(/^Options:$/m)[1]?.split(/^Commands:$/m)[0] ?? '';
  const names = [...part.matchAll(/^ {2}((?:-\w, )?--[\w-]+)/gm)].flatMap((m) => (m[1] ?? '').split(', '));
  // commander's --no-x negates --x; both spellings are accepted
  return new Set(names.flatMap((n) => (n.startsWith('--no-') ? [n, `--${n.slice(5)}`] : [n])));
}

/** Command names in the "Commands:" part of `storsweep --help`, `help` left out. */
export function commandsOf(help: string): string[] {
  const part = (help.split(/^Commands:$/m)[1] ?? '').split(/\n\s*\n/)[0] ?? '';
  return [...part.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1] ?? '').filter((c) => c !== 'help');
}

async function helpText(args: string[]): Promise<string> {
  const r = await run(process.execPath, ['bin/storsweep.mjs', ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
  return r.stdout;
}

/** `storsweep --help`, then `storsweep <command> --help` for every command it lists (at once). */
export async function readCliHelp(): Promise<CliHelp> {
  const top = await helpText([]);
  const names = commandsOf(top);
  const helps = await Promise.all(names.map((c) => helpText([c])));
  // `help` (commander's, and `help exit-codes`) takes no options
  return { commands: new Map([...names.map((c, i): [string, Set<string>] => [c, optionsOf(helps[i] ?? '')]), ['help', new Set<string>()]]), global: optionsOf(top) };
}

/** The lab's options and sub-commands, from its usage line (`npm run lab -- --help` exits 2 with it). */
export async function readLabUsage(): Promise<{ subcommands: Set<string>; options: Set<string> }> {
  const usage = await run(process.execPath, ['bin/lab.mjs', '--help'], { cwd: ROOT, encoding: 'utf8' })
    .then((r) => r.stdout + r.stderr, (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`);
  const line = usage.split('\n').find((l) => l.includes('npm run lab --')) ?? '';
  const after = line.slice(line.indexOf('npm run lab --') + 'npm run lab --'.length);
  return {
    subcommands: new Set(after.replace(/\[[^\]]*\]/g, '').split('|').map((w) => w.trim()).filter(Boolean)),
    options: new Set([...line.matchAll(/--[a-z][\w-]*/g)].map((m) => m[0])),
  };
}

/** A command line in the docs, with where it was found. */
export interface DocCommand {
  file: string;
  line: number;
  text: string;
}

/** Inline code spans and lines of fenced code blocks (a `\` continuation joined to its next line). */
export function codeOf(file: string, markdown: string): DocCommand[] {
  const out: DocCommand[] = [];
  let fence = false;
  let pending: DocCommand | null = null;
  markdown.split('\n').forEach((raw, i) => {
    if (/^\s*(```|~~~)/.test(raw)) { fence = !fence; return; }
    if (fence) {
      const text = pending ? `${pending.text} ${raw.trim()}` : raw;
      const cmd = { file, line: pending?.line ?? i + 1, text };
      if (/\\\s*$/.test(raw.replace(/#.*$/, ''))) pending = { ...cmd, text: text.replace(/\\\s*(#.*)?$/, '') };
      else { pending = null; out.push(cmd); }
      return;
    }
    for (const m of raw.matchAll(/`([^`]+)`/g)) out.push({ file, line: i + 1, text: m[1] ?? '' });
  });
  return out;
}

/** One invocation: which program, which command, which options. */
export interface Invocation extends DocCommand {
  kind: 'storsweep' | 'lab' | 'npm-run' | 'flag';
  command: string;
  options: string[];
}

const STORSWEEP = /(?:^|\s)(?:npx |node bin\/)?storsweep(?:\.mjs)?\s+(.*)$/;
const LAB = /(?:^|\s)npm run lab --\s+(.*)$/;
const NPM_RUN = /(?:^|\s)npm run ([\w:-]+)/g;

/** The options of a command line's first command: up to a pipe, `&&`, `;`, a redirect or a comment. */
function optionsIn(rest: string): string[] {
  const own = rest.split(/\s(?:\||&&|;|>|#)\s?/)[0] ?? '';
  return own.split(/\s+/).filter((t) => /^--?[a-zA-Z][\w-]*/.test(t)).map((t) => t.replace(/[=,:.)].*$/, ''));
}

/**
 * Every invocation in the docs' code: `storsweep <command> …` (also through npx or node bin/),
 * `npm run lab -- …`, `npm run <script>`, a span that starts with a command's name and an option
 * (`run --resume <runDir>`), and a span that is an option alone (`--confirm-destroy`).
 */
export function invocationsOf(code: DocCommand[], commands: ReadonlySet<string>, labWords: ReadonlySet<string>): Invocation[] {
  const out: Invocation[] = [];
  for (const c of code) {
    const text = c.text.trim();
    for (const m of text.matchAll(NPM_RUN)) out.push({ ...c, kind: 'npm-run', command: m[1] ?? '', options: [] });
    const lab = LAB.exec(text);
    const ss = STORSWEEP.exec(text);
    const [first = '', second = ''] = text.split(/\s+/);
    if (lab) {
      const [sub = '', ...rest] = (lab[1] ?? '').split(/\s+/);
      out.push({ ...c, kind: 'lab', command: sub, options: optionsIn(rest.join(' ')) });
    } else if (ss) {
      const [cmd = '', ...rest] = (ss[1] ?? '').split(/\s+/);
      if (cmd.startsWith('-')) out.push({ ...c, kind: 'storsweep', command: '', options: optionsIn(ss[1] ?? '') });
      else if (!cmd.startsWith('<') && cmd !== '…') out.push({ ...c, kind: 'storsweep', command: cmd, options: optionsIn(rest.join(' ')) });
    } else if (commands.has(first) && second.startsWith('-')) {
      out.push({ ...c, kind: 'storsweep', command: first, options: optionsIn(text.slice(first.length)) });
    } else if (labWords.has(first) && !commands.has(first) && second.startsWith('-')) {
      out.push({ ...c, kind: 'lab', command: first, options: optionsIn(text.slice(first.length)) });
    } else if (/^--[a-zA-Z]/.test(first)) {
      out.push({ ...c, kind: 'flag', command: '', options: optionsIn(text) });
    }
  }
  return out;
}

/** Each invocation the CLI would not accept, as `file:line: reason`. */
export function driftOf(
  invocations: Invocation[],
  cli: CliHelp,
  lab: { subcommands: Set<string>; options: Set<string> },
  npmScripts: ReadonlySet<string>,
): string[] {
  const everyOption = new Set([...cli.global, ...[...cli.commands.values()].flatMap((s) => [...s]), ...lab.options]);
  const problems: string[] = [];
  for (const inv of invocations) {
    const at = `${inv.file}:${inv.line}: \`${inv.text.trim()}\``;
    if (inv.kind === 'npm-run' && !npmScripts.has(inv.command)) problems.push(`${at}: no npm script "${inv.command}"`);
    if (inv.kind === 'lab') {
      if (!lab.subcommands.has(inv.command)) problems.push(`${at}: the lab has no sub-command "${inv.command}"`);
      for (const o of inv.options) if (!lab.options.has(o)) problems.push(`${at}: the lab has no option ${o}`);
    }
    if (inv.kind === 'storsweep') {
      const own = inv.command ? cli.commands.get(inv.command) : new Set<string>();
      if (!own) { problems.push(`${at}: storsweep has no command "${inv.command}"`); continue; }
      for (const o of inv.options) if (!own.has(o) && !cli.global.has(o)) problems.push(`${at}: ${inv.command || 'storsweep'} has no option ${o}`);
    }
    if (inv.kind === 'flag') for (const o of inv.options) if (!everyOption.has(o)) problems.push(`${at}: no command has the option ${o}`);
  }
  return problems;
}
