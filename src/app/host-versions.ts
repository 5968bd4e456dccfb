// A target whose inventory states no `version` is checked against the release its host reports,
// before the run changes anything: the composition reads it (read-only) and the playbook is checked
// again with it, so a VMFS version the host cannot create is refused (exit 2, at the playbook's
// value) before a LUN is partitioned or formatted. `validate` and `plan` stay offline: they check
// only the versions an inventory states.
import type { LoadedInventory, LoadedPlaybook } from '../config/index.ts';
import { ConfigError } from '../errors.ts';
import { checkPlaybookAgainst } from '../plan/check.ts';
import type { Composition } from './compose.ts';

/** Reads the release of every target that states none; refuses what it cannot do. Returns what it read. */
export async function checkAgainstHostVersions(pb: LoadedPlaybook, inv: LoadedInventory, comps: ReadonlyMap<string, Composition>): Promise<Record<string, string>> {
  const read: Record<string, string> = {};
  for (const [name, comp] of comps) {
    const target = inv.inventory.targets[name];
    if (!target || !comp.readHostVersion || (target as { version?: string }).version !== undefined) continue;
    read[name] = await comp.readHostVersion();
  }
  if (!Object.keys(read).length) return read;
  const targets = Object.fromEntries(Object.entries(inv.inventory.targets).map(([n, t]) => [n, read[n] !== undefined ? { ...t, version: read[n] } : t]));
  try {
    checkPlaybookAgainst(pb, { ...inv, inventory: { ...inv.inventory, targets } });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const note = `(the host reported ESXi ${Object.entries(read).map(([n, v]) => `${v} for target "${n}"`).join(', ')}; state it as \`version:\` in the inventory and \`validate\` refuses this too)`;
    throw new ConfigError(err.diagnostics.map((d) => ({ ...d, message: `${d.message} ${note}` })), { more: err.more });
  }
  return read;
}
