#!/usr/bin/env node
// Gives every docs/decisions/new-<slug>.md the next free number and a row in the index
// (docs/decisions/README.md). Engineers working in parallel add records as new-<slug>.md, so two
// of them never pick the same number; whoever merges runs this once.
import fs from 'node:fs';
import path from 'node:path';

const dir = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'docs', 'decisions');
const files = fs.readdirSync(dir);
let next = Math.max(0, ...files.map((f) => /^(\d{4})-/.exec(f)?.[1]).filter(Boolean).map(Number)) + 1;
const index = path.join(dir, 'README.md');
let rows = '';
for (const f of files.filter((x) => /^new-.+\.md$/.test(x)).sort()) {
  const text = fs.readFileSync(path.join(dir, f), 'utf8');
  const title = /^# (.+)$/m.exec(text)?.[1]?.trim() ?? f;
  const date = /^## Date\s*\n\s*(\d{4}-\d{2}-\d{2})/m.exec(text)?.[1] ?? '';
  const num = String(next++).padStart(4, '0');
  const name = `${num}-${f.slice(4)}`;
  fs.renameSync(path.join(dir, f), path.join(dir, name));
  rows += `| ${num} | [${title}](${name}) | ${date} |  |\n`;
  console.log(`${f} -> ${name}`);
}
if (rows) fs.writeFileSync(index, fs.readFileSync(index, 'utf8').replace(/\n*$/, '\n') + rows);
