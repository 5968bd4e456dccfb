// The use cases that read configuration and touch nothing: validate, plan, schema.
import { z } from 'zod';
import { inventoryDiagnosticAt, inventoryName, loadInventory, loadPlaybook, type LoadedInventory } from '../config/index.ts';
import { sortDiagnostics } from '../config/load.ts';
import { inventorySchema } from '../config/inventory.ts';
import { overrideTexts, parseSetArguments } from '../config/overrides.ts';
import { playbookSchema } from '../config/playbook.ts';
import type { RunPlan } from '../contract/plan.ts';
import type { Env } from '../contract/provider.ts';
import { ConfigError, UsageError, type Diagnostic } from '../errors.ts';
import { checkPlaybookAgainst } from '../plan/check.ts';
import { composeTargets, planRun } from './compose.ts';

export function jsonSchemaFor(kind: string): unknown {
  const schema = kind === 'playbook' ? playbookSchema : kind === 'inventory' ? inventorySchema() : null;
  if (!schema) throw new UsageError(`schema: expected "playbook" or "inventory", got "${kind}"`);
  // io:'input' keeps defaulted fields optional, which is what an editor should offer; draft-07 is
  // what yaml-language-server understands best.
  return z.toJSONSchema(schema, { io: 'input', target: 'draft-7', unrepresentable: 'any' });
}

/** `env`: the environment as the CLI read it. */
export function planFor(playbookFile: string, inventoryFile: string | readonly string[], runId: string, set: readonly string[], env: Env): RunPlan {
  const overrides = parseSetArguments(set);
  const pb = loadPlaybook(playbookFile, overrides);
  const inv = loadInventory(inventoryFile, env);
  const targets = checkPlaybookAgainst(pb, inv);
  return planRun(pb.playbook, composeTargets([...targets.keys()], inv), runId, overrideTexts(overrides));
}

/**
 * The test files of the targets that run on this machine, looked at now (read-only; validate connects
 * nowhere, so a guest's is looked at by `run`): one storsweep did not create is refused at the
 * inventory line that names it, unless `confirm` (validate's --confirm-destroy) names its path.
 */
export async function checkLocalTestFiles(targets: ReadonlyMap<string, unknown>, inv: LoadedInventory, confirm: string | undefined): Promise<void> {
  const confirmed = (confirm ?? '').split(',').map((n) => n.trim());
  const diags: Diagnostic[] = [];
  for (const [name, comp] of composeTargets([...targets.keys()], inv)) {
    const check = comp.testFile;
    if (!check?.local) continue;
    const f = await check.look();
    if (!f || confirmed.includes(f.path)) continue;
    const where = check.key === 'workdir' ? `the default test file ${f.path} in this workdir` : `the test file ${f.path}`;
    diags.push(inventoryDiagnosticAt(inv, ['targets', name, check.key], `${where} exists on this machine and storsweep did not create it (${f.found}); run refuses to write over it unless --confirm-destroy names ${f.path}`));
  }
  if (diags.length) throw new ConfigError(sortDiagnostics(diags));
}

/** What `validate` checked: the playbook (with its --set values) and/or the inventory. */
export interface ValidateOptions {
  /** `-i`, repeatable: later files add or replace targets and endpoints (config/inventory-layers.ts) */
  inventory?: string[];
  set?: string[];
  confirmDestroy?: string;
  /** the environment as the CLI read it (`${env:…}` secrets, govc's GOVC_*): decision 0088 */
  env: Env;
}

/** `validate`: refuses with file:line:col what run and plan would refuse; returns the --set arguments applied and the inventory's name (its files). */
export async function validateConfig(playbook: string | undefined, o: ValidateOptions): Promise<{ set: string[]; inventory?: string }> {
  if (!playbook && !o.inventory?.length) throw new UsageError('validate: give a playbook, an inventory (-i), or both');
  if (!playbook && o.set?.length) throw new UsageError('validate: --set overrides a playbook value; give the playbook');
  const overrides = parseSetArguments(o.set);
  const inv = o.inventory?.length ? loadInventory(o.inventory, o.env) : null;
  if (playbook) {
    const pb = loadPlaybook(playbook, overrides);
    if (inv) await checkLocalTestFiles(checkPlaybookAgainst(pb, inv), inv, o.confirmDestroy);
  }
  return { set: overrides.map((x) => x.argument), ...(inv ? { inventory: inventoryName(inv) } : {}) };
}
