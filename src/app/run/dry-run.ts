// `run --dry-run`: the calls a run would send, as data; the CLI prints them. Nothing is sent.
import type { RunPlan } from '../../contract/plan.ts';
import { destroyedNames } from './confirm-destroy.ts';

/** One call of a dry run, as a JSON line holds it. */
export interface DryRunCall {
  permutationId: string;
  step: string;
  provider: string;
  operation: string;
  arguments: unknown;
  destructive: boolean;
  destroys?: string[];
}

/** What a dry run says: the plan (for its schedule), each call as a JSON line, and what `--confirm-destroy` must name. */
export interface DryRun {
  plan: RunPlan;
  lines: string[];
  destroys: string[];
}

/**
 * The dry run of `plan`. `before`: calls that come first (on resume, the removal of what an
 * interrupted permutation left behind).
 */
export function dryRunOf(plan: RunPlan, before: readonly string[] = []): DryRun {
  return { plan, lines: [...before, ...dryRunLines(plan)], destroys: destroyedNames(plan) };
}

export function dryRunLines(plan: RunPlan): string[] {
  const out: string[] = [];
  for (const p of plan.permutations) {
    // The plan holds no secret (it is built from non-secret fields, and validate refuses a secret
    // value pasted into one): printed as it is, like plan.json and run.sqlite keep it.
    for (const s of p.steps) out.push(JSON.stringify({ permutationId: p.permutationId, step: s.step, provider: s.provider, operation: s.operation, arguments: s.arguments, destructive: s.destructive, ...(s.destroys?.length ? { destroys: s.destroys } : {}) }));
    // Teardown removes what the steps created, in reverse order (see run/executor.ts).
    for (const s of [...p.steps].reverse()) {
      if (s.creates) out.push(JSON.stringify({ permutationId: p.permutationId, step: `teardown ${s.creates.kind}`, provider: s.provider, operation: 'destroy', arguments: { kind: s.creates.kind, name: s.creates.name }, destructive: false }));
    }
  }
  return out;
}
