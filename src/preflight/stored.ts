// A preflight's result kept beside the runs it precedes (`<out>/preflight-<playbook>.json`, written
// atomically) so that `run` can say how old the last check is and what it found wrong.
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../results/raw.ts';
import type { PreflightReport } from './preflight.ts';

export const preflightFile = (out: string, playbook: string): string => path.resolve(out, `preflight-${playbook.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);

export function storePreflight(out: string, report: PreflightReport): string {
  fs.mkdirSync(out, { recursive: true });
  const file = preflightFile(out, report.playbook);
  writeFileAtomic(file, JSON.stringify(report, null, 1) + '\n');
  return file;
}

/** The last stored preflight of this playbook, or null (none, or unreadable). */
export function readPreflight(out: string, playbook: string): PreflightReport | null {
  try {
    const r = JSON.parse(fs.readFileSync(preflightFile(out, playbook), 'utf8')) as PreflightReport;
    return typeof r.at === 'string' && Array.isArray(r.targets) ? r : null;
  } catch {
    return null;
  }
}

/** What `run` says of it: its age and each ✗, one line each; nothing when none was kept. */
export function preflightNotice(r: PreflightReport | null, now = Date.now()): string[] {
  if (!r) return [];
  const min = Math.round((now - Date.parse(r.at)) / 60000);
  const age = min < 120 ? `${min} min` : `${Math.round(min / 60)} h`;
  const fails = r.targets.flatMap((t) => t.checks.filter((c) => c.status === 'fail').map((c) => `  ✗ ${t.target}: ${c.check}: ${c.detail}`));
  return [`note: the last preflight of this playbook ran ${age} ago (${r.at}): ${fails.length ? `${fails.length} check(s) failed` : 'every check passed'}`, ...fails];
}
