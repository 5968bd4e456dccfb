#!/usr/bin/env node
// Average words per sentence of Markdown files: how plain the docs read (issue 28, item 4).
//   node scripts/sentence-length.mjs README.md docs/guide/*.md      a table, longest average first
//   node scripts/sentence-length.mjs --json FILE…                   [{file, sentences, words, average}]
//   node scripts/sentence-length.mjs --max 20 FILE…                 exit 1 when a file's average is above 20
// Prose only: code blocks, tables, headings and HTML comments are left out. A sentence ends at
// . ! ? before a space, at a paragraph's end, or at a list item's end. `inline code` and a link
// count as one word each, as a reader takes them in.
import fs from 'node:fs';

const ABBREVIATIONS = /\b(e\.g|i\.e|etc|vs|cf|approx|no)\.$/i;

/** The prose of a Markdown text: one string per paragraph or list item. */
export function proseBlocks(markdown) {
  const blocks = [];
  let cur = [];
  let fence = false;
  const flush = () => {
    if (cur.length) blocks.push(cur.join(' '));
    cur = [];
  };
  for (const raw of markdown.replace(/<!--[\s\S]*?-->/g, '').split('\n')) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) { flush(); fence = !fence; continue; }
    if (fence) continue;
    if (line === '' || line.startsWith('#') || line.startsWith('|') || /^ {4}/.test(raw)) { flush(); continue; }
    if (/^([-*+]|\d+\.)\s/.test(line)) { flush(); cur.push(line.replace(/^([-*+]|\d+\.)\s+/, '')); continue; }
    cur.push(line);
  }
  flush();
  return blocks;
}

/** Words in one piece of prose: inline code and links are one word each. */
function words(text) {
  const plain = text
    .replace(/`[^`]*`/g, 'CODE')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, (_, t) => (t.trim() ? 'LINK' : ''))
    .replace(/\*\*|__|\*/g, '');
  return plain.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
}

/** The sentences of one block. */
export function sentences(block) {
  const out = [];
  let cur = [];
  const code = block.replace(/`[^`]*`/g, (m) => m.replace(/[.!?]/g, '·'));
  for (const token of code.split(/\s+/).filter(Boolean)) {
    cur.push(token);
    if (/[.!?][)"'”’]*$/.test(token) && !ABBREVIATIONS.test(token)) {
      out.push(cur.join(' '));
      cur = [];
    }
  }
  if (cur.length) out.push(cur.join(' '));
  return out.filter((s) => words(s).length > 0);
}

/** @returns {{sentences: number, words: number, average: number, longest: string}} */
export function measure(markdown) {
  const all = proseBlocks(markdown).flatMap(sentences);
  const counts = all.map((s) => words(s).length);
  const total = counts.reduce((a, b) => a + b, 0);
  const longestAt = counts.indexOf(Math.max(0, ...counts));
  return {
    sentences: all.length,
    words: total,
    average: all.length ? Math.round((total / all.length) * 10) / 10 : 0,
    longest: longestAt >= 0 ? (all[longestAt] ?? '') : '',
  };
}

function main(argv) {
  process.stdout.on('error', () => {}); // a closed pipe (`| head`) ends the printing only
  const json = argv.includes('--json');
  const maxAt = argv.indexOf('--max');
  const max = maxAt >= 0 ? Number(argv[maxAt + 1]) : Infinity;
  const files = argv.filter((a, i) => !a.startsWith('--') && (maxAt < 0 || i !== maxAt + 1));
  const rows = files.map((file) => ({ file, ...measure(fs.readFileSync(file, 'utf8')) }));
  if (json) {
    process.stdout.write(JSON.stringify(rows.map(({ longest: _, ...r }) => r)) + '\n');
  } else {
    for (const r of [...rows].sort((a, b) => b.average - a.average)) {
      process.stdout.write(`${String(r.average).padStart(5)}  ${String(r.sentences).padStart(4)} sentences  ${r.file}\n`);
    }
  }
  const over = rows.filter((r) => r.average > max);
  for (const r of over) process.stderr.write(`${r.file}: ${r.average} words per sentence (at most ${max})\n`);
  return over.length ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
