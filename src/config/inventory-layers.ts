// Several inventories as one (`-i .lab/inventory.yaml -i my-arrays.yaml`): one's own targets beside
// a lab's, without copying the lab's file (which `lab up` rewrites). Each file is read and checked
// on its own; later files add or replace endpoints (sshHosts, and each provider's own section:
// vSphere's vCenter entries) and targets by name, and their targets
// may use the earlier files' endpoints. What a file names relative to itself (a key file, a CA
// bundle, a `${file:…}` secret) stays relative to that file: with several files the merged entry
// names it absolutely. A problem is reported in the file that defines the entry.
import os from 'node:os';
import path from 'node:path';
import { endpointEntries, inventorySchema, type Inventory } from './inventory.ts';
import { endpointSections } from '../providers/index.ts';
import type { PathKey, SourceDoc } from './load.ts';
import { SECRET_REF } from '../input/secrets.ts';
import { lazy } from '../lazy.ts';

/** A later inventory may add endpoints only: its `targets:` may be left out (built on first use). */
export const inventoryLayerSchema = lazy(() => inventorySchema().extend({ targets: inventorySchema().shape.targets.default({}) }));

export interface InventoryLayer {
  file: string;
  /** the file's directory: its relative paths and `${file:…}` secrets are read from here */
  baseDir: string;
  value: Inventory;
  source: SourceDoc;
}

/** The sections merged by entry name: the providers' endpoint sections, sshHosts and targets. */
const sections = (): string[] => [...endpointSections().map((e) => e.key), 'sshHosts', 'targets'];

/** `${file:rel}` → `${file:/abs/rel}` (read from `baseDir`); other references as they are. */
export function absoluteSecretRef(ref: string, baseDir: string): string {
  const m = SECRET_REF.exec(ref);
  if (!m || m[1] !== 'file' || path.isAbsolute(m[2]!)) return ref;
  return `\${file:${path.resolve(baseDir, m[2]!)}}`;
}

function absolutePath(p: string, baseDir: string): string {
  return path.resolve(baseDir, p.replace(/^~(?=\/|$)/, os.homedir()));
}

/** An endpoint entry with its local files named absolutely (several files: each relative to its own). */
function withAbsolutePaths<T extends Record<string, unknown>>(entry: T, keys: readonly string[], baseDir: string): T {
  const out: Record<string, unknown> = { ...entry };
  for (const k of keys) if (typeof out[k] === 'string') out[k] = absolutePath(out[k], baseDir);
  return out as T;
}

/**
 * The layers as one inventory; `sourceOf(['targets', name])` is the file that defines that entry
 * (the last one that does), else the first file. One layer is returned as it is.
 */
export function mergeLayers(layers: readonly InventoryLayer[]): { value: Inventory; sourceOf: (at: readonly PathKey[]) => SourceDoc; storeLayer: InventoryLayer | undefined } {
  const first = layers[0]!;
  const storeLayer = layers.filter((l) => l.value.store !== undefined).at(-1);
  if (layers.length === 1) return { value: first.value, sourceOf: () => first.source, storeLayer };
  const origin = new Map<string, InventoryLayer>();
  const value: Inventory = { ...first.value, sshHosts: {}, targets: {} };
  const endpoints = endpointSections();
  for (const e of endpoints) (value as Record<string, unknown>)[e.key] = {};
  for (const layer of layers) {
    for (const e of endpoints) {
      const merged = endpointEntries(value, e.key);
      for (const [name, entry] of Object.entries(endpointEntries(layer.value, e.key))) {
        merged[name] = withAbsolutePaths(entry as Record<string, unknown>, e.pathFields ?? [], layer.baseDir);
        origin.set(`${e.key}\0${name}`, layer);
      }
    }
    for (const [name, h] of Object.entries(layer.value.sshHosts)) {
      value.sshHosts[name] = withAbsolutePaths(h, ['privateKeyFile', 'knownHostsFile'], layer.baseDir);
      origin.set(`sshHosts\0${name}`, layer);
    }
    for (const [name, t] of Object.entries(layer.value.targets)) {
      value.targets[name] = t;
      origin.set(`targets\0${name}`, layer);
    }
  }
  if (storeLayer) value.store = storeLayer.value.store;
  else delete value.store;
  const named = sections();
  const sourceOf = (at: readonly PathKey[]): SourceDoc => {
    const [section, name] = at;
    if (!named.includes(String(section))) return (at[0] === 'store' ? storeLayer ?? first : first).source;
    return (origin.get(`${String(section)}\0${String(name)}`) ?? first).source;
  };
  return { value, sourceOf, storeLayer };
}
