// What each ESXi/vCenter release of the lab (`npm run lab -- up --version 5.5|6.7|7.0|8.0`) lets a
// playbook do, checked in-process over the lab's own inventory (test/helpers/lab-inventory-file.ts,
// exactly what `up` writes): `validate` refuses at the playbook's value what the release cannot do
// (src/providers/esxi-version.ts), a `run` with the release stated refuses before it opens any
// connection, and a `run` whose inventory states no release refuses once the host has reported it —
// as the lab's simulator reports each release, and as a real ESXi 8.0.3 host does (the recorded
// vCenter SOAP session in test/fixtures/vcenter-soap). One lab per version family runs the same
// paths end to end, through the CLI, on the simulator and the stand-ins:
// test/integration/lab-versions.test.ts.
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { ConfigError } from '../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../src/plan/check.ts';
import { checkAgainstHostVersions } from '../../../src/app/host-versions.ts';
import { prepareNew } from '../../../src/app/run/new-run.ts';
import { runCommand } from '../../../src/cli/commands/run.ts';
import { EXIT, exitCodeFor } from '../../../src/cli/exit.ts';
import { labPaths, labStatusJson, labUp, LabVersionMismatch, type LabState } from '../../../src/lab/lab.ts';
import { LAB_VERSIONS, type LabVersion } from '../../../src/lab/versions.ts';
import { BLANK_DEV } from '../../../src/lab/harness/esxi/state.ts';
import { parseSoapResponse } from '../../../src/providers/vsphere/soap.ts';
import { decodeReturn } from '../../../src/providers/vsphere/types.ts';
import { FAKE_LUNS, writeLabInventory } from '../../helpers/lab-inventory-file.ts';
import { LAB_RELEASES, refusalLine, refusedByHost, refusedRuns, SHIPPED, validateExpectations, writeSmallPlaybooks, type SmallPlaybooks } from '../../helpers/lab-version-playbooks.ts';

/** A TCP listener that counts every connection made to it: the lab's vCenter and SSH endpoints point here. */
let endpoint: net.Server;
let connections = 0;
let dir: string;
let small: SmallPlaybooks;
const labs = new Map<LabVersion, Awaited<ReturnType<typeof writeLabInventory>>>();

beforeAll(async () => {
  endpoint = net.createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-labver-unit-'));
  small = await writeSmallPlaybooks(dir);
  for (const v of LAB_RELEASES) labs.set(v, await writeLabInventory(v));
});
afterAll(async () => {
  await new Promise<void>((r) => endpoint?.close(() => r()));
  for (const l of labs.values()) await l.remove();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const lab = (v: LabVersion) => labs.get(v)!;

/** The lab's inventory with its vCenter and SSH endpoints at the counting listener (and, unstated, without its release). */
async function inventoryAtListener(v: LabVersion, o: { unstated?: boolean } = {}): Promise<string> {
  const port = (endpoint.address() as net.AddressInfo).port;
  let text = (await fs.readFile(lab(v).inventory, 'utf8')).replace('https://127.0.0.1:8989/sdk', `https://127.0.0.1:${port}/sdk`).replace('    port: 2222\n', `    port: ${port}\n`);
  if (o.unstated) text = text.replaceAll(`    version: "${v}"\n`, '');
  const file = path.join(lab(v).dir, o.unstated ? 'inventory-unstated.yaml' : 'inventory-listener.yaml');
  await fs.writeFile(file, text);
  return file;
}

/** What `validate -i` does, in-process: the ConfigError it prints (exit 2), or undefined when ok. */
function validate(playbook: string, inventory: string): ConfigError | undefined {
  try {
    checkPlaybookAgainst(loadPlaybook(playbook), loadInventory(inventory, process.env));
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
}

describe.each(LAB_RELEASES)('the lab as ESXi/vCenter %s', (version) => {
  it('its inventory states the release on lab-esxi, lab-vcenter and its three guest-operations targets; status says it; another release is refused while it runs', async () => {
    const inv = await fs.readFile(lab(version).inventory, 'utf8');
    expect(inv.match(new RegExp(`^    version: "${version.replace('.', '\\.')}"$`, 'gm'))).toHaveLength(5);
    const targets = loadInventory(lab(version).inventory, process.env).inventory.targets;
    for (const t of ['lab-esxi', 'lab-vcenter', 'lab-vcenter-tools-linux', 'lab-vcenter-tools-windows', 'lab-vcenter-named-vms']) expect((targets[t] as { version?: string }).version, t).toBe(version);
    // a lab recorded as running this release (its processes: this one, alive)
    const root = await fs.mkdtemp(path.join(dir, `lab-${version}-`));
    const p = labPaths(root);
    await fs.mkdir(p.dir, { recursive: true });
    const state: LabState = { ssh: { pid: process.pid, port: 2222, user: 'bench', keyPath: p.key, knownHostsFile: p.knownHosts }, vcsim: null, scratch: p.scratch, standinState: p.standinState, version };
    await fs.writeFile(p.state, JSON.stringify(state));
    expect(labStatusJson(root, state)).toMatchObject({ running: true, version });
    const other: LabVersion = version === '8.0' ? '5.5' : '8.0';
    const refused = await labUp(root, { vcsim: false, version: other }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LabVersionMismatch);
    expect((refused as Error).message).toContain(`the lab is running as ESXi/vCenter ${version}`);
    expect(await fs.readdir(p.dir)).toEqual(['state.json']); // nothing started, nothing seeded
  });

  it('validate -i .lab/inventory.yaml: ok only for what the release does, each refusal at the playbook\'s value', () => {
    for (const e of validateExpectations(version, small)) {
      const err = validate(e.file, lab(version).inventory);
      if (e.ok) {
        expect(err, e.what).toBeUndefined();
        continue;
      }
      expect(err, e.what).toBeDefined();
      expect(exitCodeFor(err)).toBe(EXIT.usage);
      const lines = err!.message.trimEnd().split('\n');
      for (const l of lines) expect(l, e.what).toMatch(refusalLine(e.file));
      if (e.says) expect(err!.message, e.what).toContain(e.says);
    }
  });

  it('a run with the release stated refuses before it opens any connection (vCenter or SSH), and makes no run directory', async () => {
    const inventory = await inventoryAtListener(version);
    const { vsphere, shell } = refusedRuns(version, small);
    const runs = [...vsphere.map((pb) => ({ pb, lun: FAKE_LUNS[0]! })), ...shell.map((pb) => ({ pb, lun: BLANK_DEV }))];
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const before = connections;
    for (const { pb, lun } of runs) {
      const out = path.join(dir, `runs-${version}`);
      const err = await runCommand(pb, { env: process.env, inventory, out, confirmDestroy: lun }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, pb).toBeInstanceOf(ConfigError);
      expect(exitCodeFor(err), pb).toBe(EXIT.usage);
      for (const l of (err as ConfigError).message.trimEnd().split('\n')) expect(l).toMatch(refusalLine(pb));
      await expect(fs.stat(out)).rejects.toThrow(/ENOENT/);
    }
    expect(connections - before).toBe(0);
    // the listener does count: a connection to it is seen
    await new Promise<void>((r) => net.connect((endpoint.address() as net.AddressInfo).port, '127.0.0.1').on('close', () => r()).on('error', () => r()));
    expect(connections - before).toBe(1);
  });

  it(`a run whose inventory states no release plans it, then refuses it once the host reports ESXi ${LAB_VERSIONS[version].version} (the simulator's config.product.version)`, async () => {
    const pb = refusedByHost(version);
    const reported = LAB_VERSIONS[version].version;
    const err = await refusedOnHost(pb, await inventoryAtListener(version, { unstated: true }), reported);
    expect(err.message).toContain(`(the host reported ESXi ${reported} for target "lab-vcenter"`);
    // what the host allows passes: the run goes on
    const allowed = version === '5.5' ? SHIPPED['vmfs3-study'] : SHIPPED['vmfs6-study'];
    const { pb: loaded, inv, comps } = prepareNew(allowed, { env: process.env, inventory: await inventoryAtListener(version, { unstated: true }) });
    expect(await checkAgainstHostVersions(loaded, inv, reporting(comps, reported))).toEqual({ 'lab-vcenter': reported });
  });
});

type Comps = ReturnType<typeof prepareNew>['comps'];
/** The run's own compositions, their host answering `reported` (what `readHostVersion` reads from HostSystem.config.product.version). */
const reporting = (comps: Comps, reported: string): Comps => new Map([...comps].map(([n, c]) => [n, { ...c, readHostVersion: () => Promise.resolve(reported) }]));

/** `run`'s path for an inventory without `version:`: planned, then refused once the host has reported. */
async function refusedOnHost(playbook: string, inventory: string, reported: string): Promise<ConfigError> {
  // unstated, validate and the plan do not refuse it: only the host's answer does
  const { pb, inv, comps, plan } = prepareNew(playbook, { env: process.env, inventory });
  expect(plan.permutations.length).toBeGreaterThan(0);
  const err = await checkAgainstHostVersions(pb, inv, reporting(comps, reported)).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  expect(exitCodeFor(err)).toBe(EXIT.usage);
  for (const l of (err as ConfigError).message.trimEnd().split('\n')) expect(l).toMatch(refusalLine(playbook));
  return err as ConfigError;
}

describe('a real host that reports its release (recorded vCenter 8.0.3 session)', () => {
  it('ESXi 8.0.3 (HostSystem.config.product.version as the host answered it) refuses the VMFS3 study as release 8.0', async () => {
    const file = path.join(import.meta.dirname, '../../fixtures/vcenter-soap/vcenter-8.0.3/test_json_host_explode/30-Fetch.response.xml');
    const config = decodeReturn(parseSoapResponse('Fetch', 200, readFileSync(file, 'utf8')), 'anyType') as { product?: { version?: unknown } };
    const reported = config.product?.version;
    expect(reported).toBe('8.0.3');
    const err = await refusedOnHost(SHIPPED['vmfs3-study'], await inventoryAtListener('8.0', { unstated: true }), reported as string);
    expect(err.message).toContain('runs ESXi 8.0, which creates vmfs5, vmfs6 only');
    expect(err.message).toContain('(the host reported ESXi 8.0.3 for target "lab-vcenter"');
  });
});
