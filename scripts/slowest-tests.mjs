#!/usr/bin/env node
// Prints the suite's wall time and its ten slowest test files from vitest's JSON reports
// (`npm test` writes them to test-results/; .ci/run prints this at its end, pass or fail).
//
//   node scripts/slowest-tests.mjs [report.json ...]   (default: test-results/*.json)
import fs from 'node:fs';
import path from 'node:path';

const dir = 'test-results';
const files = process.argv.slice(2).length ? process.argv.slice(2) : fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => path.join(dir, f)) : [];
const rows = [];
let first = Infinity;
let last = 0;
for (const f of files) {
  let report;
  try {
    report = JSON.parse(fs.readFileSync(f, 'utf8'));
  } catch {
    continue; // a run cut short writes no report
  }
  for (const r of report.testResults ?? []) {
    first = Math.min(first, r.startTime);
    last = Math.max(last, r.endTime);
    rows.push({ file: path.relative(process.cwd(), r.name), ms: r.endTime - r.startTime, status: r.status });
  }
}
if (!rows.length) {
  console.log('slowest test files: no vitest report found (test-results/*.json)');
  process.exit(0);
}
rows.sort((a, b) => b.ms - a.ms);
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(`test files: ${rows.length}, from the first start to the last end ${s(last - first)} (parallel files overlap)`);
console.log('ten slowest files:');
for (const r of rows.slice(0, 10)) console.log(`  ${s(r.ms).padStart(8)}  ${r.file}${r.status === 'passed' ? '' : `  (${r.status})`}`);
