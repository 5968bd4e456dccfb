// Stable ids: a permutation's id is a hash of its axes only, so the same playbook gives the same
// ids on every machine and every run (resume and run-to-run comparison rely on it).
import crypto from 'node:crypto';
import type { Axes } from '../contract/axis.ts';
import { axesKey } from './matrix.ts';

export function permutationId(axes: Axes): string {
  return 'p' + crypto.createHash('sha256').update(axesKey(axes)).digest('hex').slice(0, 12);
}

/** Short, sortable, unique enough for owned object names: `r` + base36 time + 4 random chars. */
export function newRunId(now = new Date()): string {
  return 'r' + now.getTime().toString(36) + crypto.randomBytes(2).toString('hex');
}

/** Prefix of every object a permutation creates: `ss-<runId>-<permutationId>`. */
export function ownedPrefix(runId: string, permId: string): string {
  return `ss-${runId}-${permId}`;
}

export const OWNED_NAME = /^ss-r[0-9a-z]+-p[0-9a-f]{12}(-|$)/;
