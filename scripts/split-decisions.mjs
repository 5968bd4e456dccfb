#!/usr/bin/env node
// One-off: splits docs/decisions.md into docs/decisions/NNNN-title.md (issue 28, item 4).
// Each `## ` section becomes one record with Date (when git first saw its heading), Status,
// Context, Decision and Consequences. The sorting of text into the three parts is a heuristic;
// the records were fixed up by hand afterwards. Run from the repository root.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

const SRC = 'docs/decisions.md';
const OUT = 'docs/decisions';
const text = fs.readFileSync(SRC, 'utf8');

/** Sections at `## `; a `### ` stays inside its section as a sub-heading. */
function sections(md) {
  const out = [];
  let cur;
  for (const line of md.split('\n')) {
    if (line.startsWith('## ')) {
      cur = { heading: line.slice(3).trim(), lines: [] };
      out.push(cur);
    } else if (cur) cur.lines.push(line);
  }
  return out;
}

function addedOn(needle) {
  try {
    const out = execFileSync('git', ['log', `-S${needle}`, '--format=%ad', '--date=short', '--', SRC], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
    return out.at(-1) ?? null;
  } catch {
    return null;
  }
}

/** The earliest of: when the heading appeared, when the section's first line appeared (a heading
 *  renamed later would otherwise date the record at the rename). */
function firstDate(heading, lines) {
  const bare = heading.replace(/\s+—\s+\d{4}-\d{2}-\d{2}$/, '');
  const first = lines.find((l) => l.trim().length > 20)?.trim().slice(0, 60);
  const dates = [addedOn(bare), first ? addedOn(first) : null].filter(Boolean).sort();
  return dates[0] ?? null;
}

/** Records whose status is not plain "Accepted", decided by reading them. */
const STATUS = {
  1: 'Accepted; amended by replicates: `repeat: {reprovision: true}` provisions each repetition anew (docs/guide/playbooks.md)',
  24: 'Accepted; amended in part by the review of issue 11 (item 7), issue 14 and issue 17, as the record says',
  35: 'Accepted; to be superseded by the import-graph test (issue 28, item 2)',
  39: 'Accepted; to be superseded by providers as folders of operations (issue 28, item 1)',
  59: 'Accepted; how esxtop is stopped is superseded by [0060](0060-esxtop-is-stopped-only-while-the-host-shows.md)',
};

function slug(heading) {
  return heading.toLowerCase()
    .replace(/\(.*?\)/g, '')
    .replace(/`/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .split('-').slice(0, 8).join('-');
}

/** Blocks: paragraphs, list items (with their continuation lines) and fenced code. */
function blocks(lines) {
  const out = [];
  let cur = null;
  let fence = false;
  for (const line of lines) {
    if (fence) { cur.push(line); if (line.startsWith('```')) { fence = false; out.push(cur); cur = null; } continue; }
    if (line.startsWith('```')) { if (cur) out.push(cur); cur = [line]; fence = true; continue; }
    if (line.trim() === '') { if (cur) out.push(cur); cur = null; continue; }
    if (/^(- |### |\*\*|Weighed|Superseded|Known gap|Not verified|End\/stop race|On this machine)/.test(line)) { if (cur) out.push(cur); cur = [line]; continue; }
    (cur ??= []).push(line);
  }
  if (cur) out.push(cur);
  return out.map((b) => b.join('\n'));
}

const CONTEXT_LABEL = /^- \*\*(Context|The problem|Problem)\*\*:?\s*/i;
const DECISION_LABEL = /^- \*\*Decision\*\*:?\s*/i;
const CONSEQ_LABEL = /^- \*\*(Consequences?|What it is not|Left for later|Not changed|Cost)\*\*:?\s*/i;
const CONSEQ_START = /^(- )?(Weighed|Known gap|Not verified|Rejected|Chosen over|Revisit|Left for later|Not changed|Cost|Limits?:)/;
const PROBLEM = /used to|looked alike|showed|\bwould\b|irreversible|has no|had no|cannot|can't|lacks|is not a dependency|review|timed out|Profiling|timeline|peaked|whatever|planned a fixed|^Context:|no way|took ~|ran src\/ through|keeps running|depends on|left fio running|could not|never|gets typed by habit/i;

function sentences(p) {
  return p.replace(/\n/g, ' ').split(/(?<=[.!?])\s+(?=[A-Z`(])/);
}

/** A labelled bullet's continuation lines lose their list indent. */
const unwrap = (b) => b.replace(/\n\s+/g, '\n');

function classify(body) {
  const ctx = [], dec = [], con = [];
  const bs = blocks(body);
  bs.forEach((b, i) => {
    if (CONTEXT_LABEL.test(b)) return ctx.push(unwrap(b.replace(CONTEXT_LABEL, '')));
    if (DECISION_LABEL.test(b)) return dec.push(unwrap(b.replace(DECISION_LABEL, '')));
    if (/^- \*\*Consequences?\*\*/i.test(b)) return con.push(unwrap(b.replace(CONSEQ_LABEL, '')));
    if (CONSEQ_LABEL.test(b)) return con.push(b);
    if (CONSEQ_START.test(b)) return con.push(b);
    if (i === 0 && !b.startsWith('- ') && !b.startsWith('```')) {
      const ss = sentences(b);
      let k = 0;
      while (k < ss.length && k < 2 && PROBLEM.test(ss[k])) k++;
      if (k === ss.length && ss.length > 1) k = ss.length - 1; // leave the decision something
      if (k > 0) ctx.push(ss.slice(0, k).join(' ').replace(/^Context:\s*/, ''));
      if (k < ss.length) dec.push(ss.slice(k).join(' '));
      return;
    }
    dec.push(b);
  });
  return { ctx, dec, con };
}

const secs = sections(text);
fs.mkdirSync(OUT, { recursive: true });
const index = [];
secs.forEach((s, i) => {
  const n = String(i + 1).padStart(4, '0');
  const title = s.heading.replace(/\s+—\s+\d{4}-\d{2}-\d{2}$/, '');
  const file = `${n}-${slug(title)}.md`;
  const date = firstDate(s.heading, s.lines) ?? 'unknown';
  const { ctx, dec, con } = classify(s.lines);
  const part = (xs, none) => (xs.length ? xs.join('\n\n') : none);
  const md = [
    `# ${n}. ${title}`, '',
    `- **Date**: ${date}`,
    `- **Status**: ${STATUS[i + 1] ?? 'Accepted'}`, '',
    '## Context', part(ctx, '(Stated with the decision below.)'), '',
    '## Decision', part(dec, ''), '',
    '## Consequences', part(con, '(None recorded beyond the decision.)'), '',
  ].join('\n');
  fs.writeFileSync(`${OUT}/${file}`, md);
  index.push({ n, title, file, date, status: STATUS[i + 1] ? STATUS[i + 1].split(';')[1].trim().replace(/\(.*?\)|\[(\d+)\]\([^)]*\)/g, '$1').trim() : '' });
  process.stdout.write(`${file}\t${date}\tctx=${ctx.length} con=${con.length}\n`);
});
const esc = (t) => t.replace(/\|/g, '\\|');
fs.writeFileSync(`${OUT}/README.md`, [
  '# Decisions',
  '',
  'One record per decision: why things are the way they are.',
  'Each file has a date, a status, the context, the decision and its consequences.',
  'A superseded record stays, and says what replaced it.',
  '',
  'To add one: copy a record, take the next number, add one row at the end of this table.',
  '',
  '| # | Decision | Date | Note |',
  '|---|---|---|---|',
  ...index.map((r) => `| ${r.n} | [${esc(r.title)}](${r.file}) | ${r.date} | ${esc(r.status)} |`),
  '',
].join('\n'));
