// The docs have a front door and cannot drift (issue 28, item 4): the README stays a quick start,
// docs/README.md indexes every guide page, decisions are one record per file with an index, the
// reader's pages are written in plain short sentences (scripts/sentence-length.mjs), every link
// resolves, and every storsweep command and option the docs name is one `--help` lists.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { codeOf, driftOf, invocationsOf, readCliHelp, readLabUsage, type CliHelp } from '../helpers/doc-commands.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');
const mdIn = (dir: string) => fs.readdirSync(path.join(ROOT, dir)).filter((f) => f.endsWith('.md')).sort().map((f) => `${dir}/${f}`);

/** The pages a user or maintainer reads: held to 20 words per sentence on average. */
const READER_PAGES = ['README.md', 'docs/README.md', 'docs/architecture.md', 'docs/testing.md', ...mdIn('docs/guide'), ...mdIn('docs/internals'), 'docs/decisions/README.md'];
/** Decision records split out of docs/decisions.md as they were written: a ceiling so they grow no worse. */
const REFERENCE_PAGES = mdIn('docs/decisions').filter((f) => !f.endsWith('/README.md'));
const READER_MAX = 20;
const REFERENCE_MAX = 45;
/** A decision written from now on (numbered after the split, or new-<slug>.md awaiting its number). */
const NEW_RECORD_MAX = 25;
const isNewRecord = (f: string) => /\/new-[\w-]+\.md$/.test(f) || Number(/\/(\d{4})-/.exec(f)?.[1] ?? 0) > 69;

async function sentenceLengths(files: string[]): Promise<Map<string, number>> {
  const r = await promisify(execFile)(process.execPath, ['scripts/sentence-length.mjs', '--json', ...files], { cwd: ROOT, encoding: 'utf8' });
  const rows = JSON.parse(r.stdout) as { file: string; average: number }[];
  return new Map(rows.map((x) => [x.file, x.average]));
}

describe('the front door', () => {
  it('README is a quick start of at most 12 KB; the primer at most 15 KB', () => {
    expect(fs.statSync(path.join(ROOT, 'README.md')).size).toBeLessThanOrEqual(12 * 1024);
    expect(fs.statSync(path.join(ROOT, 'docs/architecture.md')).size).toBeLessThanOrEqual(15 * 1024);
  });

  it('README keeps the two set-up commands exactly', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/^npm run demo {4}# /m);
    expect(readme).toMatch(/^npm ci {10}# once, then:$/m);
    expect(readme).toMatch(/^npm test {8}# /m);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(Object.keys(scripts)).toEqual(expect.arrayContaining(['demo', 'test', 'lab']));
  });

  it('docs/README.md links every guide page, and the README links the index', () => {
    const index = read('docs/README.md');
    for (const page of mdIn('docs/guide')) expect(index, page).toContain(`(${page.slice('docs/'.length)})`);
    expect(read('README.md')).toContain('(docs/README.md)');
  });

  it('every storsweep command --help lists has a row on the commands page', async () => {
    const cli = await cliHelp;
    const page = read('docs/guide/commands.md');
    for (const c of cli.commands.keys()) expect(page, c).toMatch(new RegExp(`^\\| \`${c}\` \\|`, 'm'));
  });
});

describe('decisions: one record per file, with an index', () => {
  const records = mdIn('docs/decisions').filter((f) => /\/\d{4}-[\w-]+\.md$/.test(f));

  it('docs/decisions.md is gone; the records are numbered 0001… without gaps', () => {
    expect(fs.existsSync(path.join(ROOT, 'docs/decisions.md'))).toBe(false);
    expect(records.length).toBeGreaterThanOrEqual(69);
    expect(records.map((f) => Number(/\/(\d{4})-/.exec(f)?.[1]))).toEqual(records.map((_, i) => i + 1));
  });

  it.each(mdIn('docs/decisions').filter((f) => !f.endsWith('/README.md')))('%s has a date, a status, context, decision and consequences', (f) => {
    const text = read(f);
    for (const part of ['Date', 'Status', 'Context', 'Decision', 'Consequences']) {
      expect(text, `${f}: ${part}`).toMatch(new RegExp(`^(#+ *|[-*] +\\*\\*|\\*\\*)${part}\\b`, 'm'));
    }
    expect(text).toMatch(/Date[*:\s]*\d{4}-\d{2}-\d{2}/);
  });

  it('the index lists every numbered record once, and a superseded one names what superseded it', () => {
    const index = read('docs/decisions/README.md');
    for (const f of records) expect(index.split(`(${path.basename(f)})`).length - 1, f).toBe(1);
    for (const f of records) {
      const status = /Status\**:? *(.*)/.exec(read(f))?.[1] ?? '';
      if (/superseded/i.test(status) && !/to be superseded/i.test(status)) expect(status, f).toMatch(/\]\(\d{4}-[\w-]+\.md\)|issue \d+/);
    }
  });
});

describe('plain short sentences (scripts/sentence-length.mjs)', () => {
  it(`the reader's pages average at most ${READER_MAX} words a sentence`, async () => {
    const averages = await sentenceLengths(READER_PAGES);
    const over = READER_PAGES.filter((f) => (averages.get(f) ?? Infinity) > READER_MAX);
    expect(over.map((f) => `${f}: ${averages.get(f)}`)).toEqual([]);
  });

  it(`decision records stay under ${REFERENCE_MAX} (new records: ${NEW_RECORD_MAX})`, async () => {
    const averages = await sentenceLengths(REFERENCE_PAGES);
    const over = REFERENCE_PAGES.filter((f) => (averages.get(f) ?? Infinity) > (isNewRecord(f) ? NEW_RECORD_MAX : REFERENCE_MAX));
    expect(over.map((f) => `${f}: ${averages.get(f)}`)).toEqual([]);
  });

  it('the script measures: a long sentence is over the bound, short ones are not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-test-'));
    try {
      fs.writeFileSync(path.join(dir, 'long.md'), `# Title\n\n${'word '.repeat(30).trim()}.\n\n\`\`\`sh\n${'code '.repeat(200)}\n\`\`\`\n`);
      fs.writeFileSync(path.join(dir, 'short.md'), 'One short sentence. Another one, e.g. this, with `inline code here`.\n\n- a list item\n');
      const rel = (f: string) => path.join(dir, f);
      const averages = await sentenceLengths([rel('long.md'), rel('short.md')]);
      expect(averages.get(rel('long.md'))).toBe(30);
      // 'One short sentence.' 3; 'Another one, e.g. this, with `…`.' 6 (inline code is one word); the item 3
      expect(averages.get(rel('short.md'))).toBe(4);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('links resolve', () => {
  const pages = READER_PAGES;
  const slug = (heading: string) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');
  const anchorsOf = (f: string) => new Set([...read(f).replace(/```[\s\S]*?```/g, '').matchAll(/^#+ (.*)$/gm)].map((m) => slug(m[1] ?? '')));

  it.each(pages)('%s: every relative link names a file that ships, and its #anchor a heading', (f) => {
    const broken: string[] = [];
    for (const m of read(f).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z]+:/.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      const resolved = file ? path.join(path.dirname(f), file) : f;
      if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${target}: no ${resolved}`);
      else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) broken.push(`${target}: no heading #${anchor} in ${resolved}`);
    }
    expect(broken).toEqual([]);
  });
});

let cliHelp: Promise<CliHelp>;
beforeAll(() => {
  cliHelp = readCliHelp();
  // a rejection is reported by the test that awaits it
  cliHelp.catch(() => undefined);
}, 120_000);

describe('the docs name only commands and options the CLI has (read from --help)', () => {
  const docPages = READER_PAGES;

  it('every storsweep command, option, lab command and npm script in the docs exists', async () => {
    const [cli, lab] = await Promise.all([cliHelp, readLabUsage()]);
    expect(cli.commands.size).toBeGreaterThanOrEqual(13);
    expect(cli.commands.get('run')).toContain('--confirm-destroy');
    const scripts = new Set(Object.keys((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts));
    const invocations = docPages.flatMap((f) => invocationsOf(codeOf(f, read(f)), new Set(cli.commands.keys()), lab.subcommands));
    // the docs do name commands and options: the scan sees them
    expect(invocations.filter((i) => i.kind === 'storsweep').length).toBeGreaterThan(50);
    expect(invocations.some((i) => i.command === 'run' && i.options.includes('--resume'))).toBe(true);
    expect(driftOf(invocations, cli, lab, scripts)).toEqual([]);
  });

  it('a misspelt option, an unknown command, a lab option or a script that does not exist is reported', async () => {
    const [cli, lab] = await Promise.all([cliHelp, readLabUsage()]);
    const doc = [
      'Run `storsweep run --resum <runDir>` and `cleanup --confirm-destory naa.1`.',
      '```sh',
      'npx storsweep frobnicate x.yaml',
      'npx storsweep submit a.yaml --store "$S" \\',
      '  --confirm-destroy naa.1 --until-idle   # a worker option',
      'npm run lab -- up --versions 8.0',
      'npm run labs',
      '```',
      'A bare `--no-such-option`; fine: `--set key=value`, `report -o FILE`, `storsweep run … | head`, `fio --thread`.',
    ].join('\n');
    const problems = driftOf(invocationsOf(codeOf('x.md', doc), new Set(cli.commands.keys()), lab.subcommands), cli, lab, new Set(['lab']));
    expect(problems.map((p) => p.replace(/: `.*`:/, ':'))).toEqual([
      'x.md:1: run has no option --resum',
      'x.md:1: cleanup has no option --confirm-destory',
      'x.md:3: storsweep has no command "frobnicate"',
      'x.md:4: submit has no option --until-idle',
      'x.md:6: the lab has no option --versions',
      'x.md:7: no npm script "labs"',
      'x.md:9: no command has the option --no-such-option',
    ]);
  });
});
