// `npm run lab -- up --version 5.5|6.7|7.0|8.0`, end to end on one lab per version family: 5.5 (the
// VMFS3 era: ESXi 5.x creates VMFS3 and VMFS5) and 6.7 (the VMFS6 era, 6.5 and later: VMFS5 and VMFS6),
// each started by `bin/lab.mjs up --version`. The simulator and the ESXi stand-ins report the release
// (read by pyVmomi and by the stand-in commands themselves) and create only the VMFS versions it has
// (src/lab/harness/vcsim/version.go, src/lab/harness/esxi/esxi_state.py); `validate -i
// .lab/inventory.yaml` refuses, at the playbook's value, what the release cannot do
// (src/providers/esxi-version.ts), and a refused `run` sends no mutating call — with the release
// stated in the inventory, or read from the host when it is not.
// The family's other releases, 7.0 and 8.0, on the same labs: the 6.7 lab's simulator switched to
// each (the harness's version control, the same profile `-version` applies at start), and the ESXi
// stand-ins on the host model `up --version` seeds for each. What validate and run decide for every
// release, each playbook, is checked in-process over the lab's inventory: test/unit/cli/lab-versions.test.ts.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths, type LabState } from '../../src/lab/lab.ts';
import { ESXI_HARNESS_DIR, BLANK_DEV, defaultEsxiState, seedEsxiState } from '../../src/lab/harness/esxi/state.ts';
import type { LabVersion } from '../../src/lab/versions.ts';
import { vcsimControl, type VcsimControl } from '../../src/lab/vcsim.ts';
import { VsphereClient, type MoRef } from '../../src/providers/vsphere/client.ts';
import type { VsphereFault } from '../../src/providers/vsphere/fault.ts';
import { queryVmfsConfigOption } from '../../src/providers/vsphere/methods.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { CREATES, refusalLine, refusedByHost, refusedRuns, SHIPPED, writeSmallPlaybooks, type SmallPlaybooks } from '../helpers/lab-version-playbooks.ts';
import { probe } from '../helpers/pyvmomi-probe.ts';

const LAB = path.join(REPO_ROOT, 'bin', 'lab.mjs');
/** one lab per version family, and the family's other releases it is switched to */
const FAMILIES: Array<{ version: LabVersion; others: LabVersion[] }> = [
  { version: '5.5', others: [] },
  { version: '6.7', others: ['7.0', '8.0'] },
];

function lab(root: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LAB, ...args], { cwd: root, timeout: 180_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** A stand-in ESXi command run as the lab's sshd runs it: on the lab's host model. */
function standin(stateDir: string, tool: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(path.join(ESXI_HARNESS_DIR, tool), args, { env: { ...process.env, STORSWEEP_STANDIN_STATE: stateDir } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

// SOAP methods that change nothing on a host (reads, session, views); anything else is mutating.
const READ_ONLY = /^(RetrieveServiceContent|Login|Logout|RetrieveProperties(Ex)?|ContinueRetrievePropertiesEx|CancelRetrievePropertiesEx|CreateContainerView|CreateListView|ModifyListView|DestroyView|CreateFilter|DestroyPropertyFilter|WaitForUpdatesEx|FindByInventoryPath|CurrentTime|Query\w+)$/;
const mutating = (calls: Record<string, number>) => Object.keys(calls).filter((m) => !READ_ONLY.test(m));

interface Sim {
  url: string;
  username: string;
  password: string;
  certFile: string;
  thumbprint: string;
}

/** ServiceContent.about and every host's config.product (pyVmomi) say `version`. */
async function simulatorReports(sim: Sim, version: LabVersion): Promise<void> {
  const [about] = await probe(sim, [{ op: 'about', products: true }]);
  expect(about).toMatchObject({ ok: true, apiType: 'VirtualCenter', version: `${version}.0`, fullName: expect.stringMatching(new RegExp(`^VMware vCenter Server ${version}\\.0 build-\\d+$`)) });
  expect(String(about!.apiVersion).startsWith(version)).toBe(true);
  const products = about!.products as Record<string, { version: string; fullName: string; summaryVersion: string }>;
  expect(Object.keys(products).length).toBeGreaterThanOrEqual(4);
  for (const p of Object.values(products)) {
    expect(p).toMatchObject({ version: `${version}.0`, summaryVersion: `${version}.0`, fullName: expect.stringMatching(new RegExp(`^VMware ESXi ${version}\\.0 build-\\d+$`)) });
  }
}

/** CreateVmfsDatastore makes only the release's VMFS versions; QueryVmfsConfigOption (6.5+) ties unmap granularity to the block size. */
async function simulatorCreates(sim: Sim, version: LabVersion): Promise<void> {
  const host = 'DC0_C0_H2'; // its own LUNs: the lab's target host is left alone
  const [luns] = await probe(sim, [{ op: 'luns', host }]);
  const disks = (luns!.available as { canonicalName: string }[]).map((l) => l.canonicalName);
  const res = await probe(sim, [
    ...[3, 5, 6].map((major, i) => ({ op: 'create-vmfs', host, disk: disks[i], name: `v${major}-${version}`, major })),
    { op: 'create-vmfs', host, disk: disks[3], name: `v6-64k-default-unmap-${version}`, major: 6, blockSize: 64 },
    { op: 'create-vmfs', host, disk: disks[3], name: `v6-64k-${version}`, major: 6, blockSize: 64, unmapGranularity: 64 },
  ]);
  [3, 5, 6].forEach((major, i) => {
    if (CREATES[version].includes(major)) expect(res[i], `VMFS${major}`).toMatchObject({ ok: true });
    else expect(res[i], `VMFS${major}`).toMatchObject({ ok: false, fault: 'InvalidArgument', message: 'A specified parameter was not correct: vmfsMajorVersion' });
  });
  const [defaultUnmap, own] = res.slice(3);
  // QueryVmfsConfigOption through our own client: Debian's pyVmomi predates the method
  const c = await VsphereClient.connect({ url: sim.url, username: sim.username, password: sim.password, thumbprint: sim.thumbprint });
  const config = await (async () => {
    const dss = (await c.readProps(await c.findHost(host), ['configManager.datastoreSystem']))['configManager.datastoreSystem'] as MoRef;
    return queryVmfsConfigOption(c.session, dss).then(
      (options) => ({ ok: true, options }),
      (err: unknown) => ({ ok: false, fault: (err as VsphereFault).faultName }),
    );
  })().finally(() => c.logout());
  if (version === '5.5') {
    expect(config).toMatchObject({ ok: false, fault: 'MethodNotFound' });
    expect(defaultUnmap).toMatchObject({ ok: false, fault: 'InvalidArgument' });
    expect(own).toMatchObject({ ok: false, fault: 'InvalidArgument' });
  } else {
    expect(config).toMatchObject({ ok: true, options: [{ blockSizeOption: 64, unmapGranularityOption: [64] }, { blockSizeOption: 1024, unmapGranularityOption: [1024] }] });
    expect(defaultUnmap).toMatchObject({ ok: false, fault: 'InvalidArgument', message: expect.stringContaining('spec.vmfs.unmapGranularity') });
    expect(own).toMatchObject({ ok: true });
  }
  const made = [...[3, 5, 6].filter((m) => CREATES[version].includes(m)).map((m) => `v${m}-${version}`), ...(version === '5.5' ? [] : [`v6-64k-${version}`])];
  const removed = await probe(sim, made.map((name) => ({ op: 'remove-datastore', host, name })));
  expect(removed.every((r) => r.ok)).toBe(true);
}

/** `vmware -v` and `esxcli system version get` on the host model in `stateDir` say `version`. */
async function standinsReport(stateDir: string, version: LabVersion): Promise<void> {
  const v = await standin(stateDir, 'vmware', ['-v']);
  expect(v.stdout).toMatch(new RegExp(`^VMware ESXi ${version}\\.0 build-\\d+\\n$`));
  const e = await standin(stateDir, 'esxcli', ['system', 'version', 'get']);
  expect(e.stdout).toMatch(new RegExp(`^   Product: VMware ESXi\\n   Version: ${version}\\.0\\n   Build: Releasebuild-\\d+\\n   Update: \\d+\\n   Patch: \\d+\\n$`));
}

/** `vmkfstools -C` on a copy of the host model in `stateDir` creates only the release's VMFS versions, and no VMFS5 on a 4Kn device. */
async function vmkfstoolsCreates(stateDir: string, version: LabVersion, scratch: string): Promise<void> {
  // a copy of the host model with a VMFS-typed partition per label, so only -C is under test
  const dir = await fs.mkdtemp(path.join(scratch, 'esxi-'));
  const model = JSON.parse(await fs.readFile(path.join(stateDir, 'esxi.json'), 'utf8')) as { devices: Record<string, unknown> };
  const dev = (label: string, type: string, format?: string) => ({ sizeMb: 4096, vendor: 'VMware', model: 'Virtual disk', label, format, partitions: [{ number: 1, start: label === 'msdos' ? 128 : 2048, end: 8388000, type, attr: 0 }] });
  model.devices['naa.6000c29000000000000000000000f0f3'] = dev('msdos', '251');
  model.devices['naa.6000c29000000000000000000000f0f5'] = dev('gpt', 'AA31E02A400F11DB9590000C2911D1B8');
  model.devices['naa.6000c29000000000000000000000f0f6'] = dev('gpt', 'AA31E02A400F11DB9590000C2911D1B8');
  model.devices['naa.6000c29000000000000000000000f4f4'] = dev('gpt', 'AA31E02A400F11DB9590000C2911D1B8', '4Kn');
  await fs.writeFile(path.join(dir, 'esxi.json'), JSON.stringify(model));
  await fs.writeFile(path.join(dir, 'commands.jsonl'), '');
  const create = (fs_: string, d: string) => standin(dir, 'vmkfstools', ['-C', fs_, '-b', '1m', '-S', `${fs_}-${d.slice(-4)}`, `/vmfs/devices/disks/${d}:1`]);
  const results = [await create('vmfs3', 'naa.6000c29000000000000000000000f0f3'), await create('vmfs5', 'naa.6000c29000000000000000000000f0f5'), await create('vmfs6', 'naa.6000c29000000000000000000000f0f6')];
  [3, 5, 6].forEach((major, i) => {
    if (CREATES[version].includes(major)) expect(results[i], `vmfs${major}`).toMatchObject({ code: 0, stdout: expect.stringContaining('Successfully created new volume') });
    else expect(results[i], `vmfs${major}`).toMatchObject({ code: 1, stderr: `Error: vmfs${major} file systems cannot be created on ESXi ${version}.0 (creatable: ${CREATES[version].map((m) => `vmfs${m}`).join(', ')})\n` });
  });
  const fourK = await create('vmfs5', 'naa.6000c29000000000000000000000f4f4');
  expect(fourK).toMatchObject({ code: 1, stderr: expect.stringContaining('vmfs5 is not supported on 4Kn device') });
}

describe.each(FAMILIES)('npm run lab -- up --version $version', ({ version, others }) => {
  let root: string;
  let state: LabState;
  let inventory: string;
  let sim: Sim;
  let control: VcsimControl;
  let vmfsDevice: string;
  let small: SmallPlaybooks;

  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), `ss-labver-${version}-`));
    const up = await lab(root, ['up', '--version', version]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`lab up (ESXi/vCenter ${version})`);
    const p = labPaths(root);
    state = JSON.parse(await fs.readFile(p.state, 'utf8')) as LabState;
    inventory = p.inventory;
    sim = { url: state.vcsim!.url, username: state.vcsim!.username, password: (await fs.readFile(p.vcsimPassword, 'utf8')).trim(), certFile: state.vcsim!.certFile, thumbprint: state.vcsim!.thumbprint };
    control = vcsimControl(state.vcsim!);
    vmfsDevice = state.vcsim!.luns[0]!;
    small = await writeSmallPlaybooks(root);
    // the same inventory without the stated release: `run` then asks the host
    await fs.writeFile(path.join(root, '.lab', 'inventory-unstated.yaml'), (await fs.readFile(inventory, 'utf8')).replaceAll(`    version: "${version}"\n`, ''));
  }, 240_000);

  afterAll(async () => {
    if (root) {
      await lab(root, ['down']);
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('states the release in .lab/inventory.yaml and status', async () => {
    const inv = await fs.readFile(inventory, 'utf8');
    expect(inv.match(new RegExp(`^    version: "${version.replace('.', '\\.')}"$`, 'gm'))).toHaveLength(5); // lab-esxi, lab-vcenter, its two guest-operations targets (lab-vcenter-tools-linux/-windows) and lab-vcenter-named-vms
    const [text, json, other] = await Promise.all([lab(root, ['status']), lab(root, ['status', '--json']), lab(root, ['up', '--version', version === '8.0' ? '5.5' : '8.0'])]);
    expect(text.stdout).toContain(`version: ESXi/vCenter ${version}`);
    expect(JSON.parse(json.stdout)).toMatchObject({ running: true, version });
    // another release needs `down` first
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`the lab is running as ESXi/vCenter ${version}`);
  });

  it('the simulator reports it: ServiceContent.about and every host\'s config.product (pyVmomi)', async () => {
    await simulatorReports(sim, version);
  });

  it('the ESXi stand-ins report it: vmware -v, esxcli system version get', async () => {
    await standinsReport(state.standinState, version);
  });

  it(`the simulator creates VMFS ${CREATES[version].join(' and ')} only; QueryVmfsConfigOption (6.5+) ties unmap granularity to the block size`, async () => {
    await simulatorCreates(sim, version);
  });

  it('vmkfstools -C creates only the release\'s VMFS versions, and no VMFS5 on a 4Kn device', async () => {
    await vmkfstoolsCreates(state.standinState, version, root);
  });

  it('validate -i .lab/inventory.yaml: the family\'s study is ok; a VMFS3 1 MB × 300 GB disk is refused at the playbook\'s value, for the release\'s reason', async () => {
    const study = version === '5.5' ? SHIPPED['vmfs3-study'] : SHIPPED['vmfs6-study'];
    const [ok, refused] = await Promise.all([runCli(['validate', study, '-i', inventory], { cwd: root }), runCli(['validate', small['vmfs3-1mb-300gb'], '-i', inventory], { cwd: root })]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(refused.code).toBe(2);
    for (const l of refused.stderr.trimEnd().split('\n')) expect(l).toMatch(refusalLine(small['vmfs3-1mb-300gb']));
    expect(refused.stderr).toContain(version === '5.5' ? 'a VMFS3 volume with 1 MiB blocks stores files up to 256 GiB' : `runs ESXi ${version}, which creates vmfs5, vmfs6 only`);
  });

  it('a refused run sends nothing, with the release stated; read from the host, it sends no mutating call', async () => {
    const { vsphere, shell } = refusedRuns(version, small);
    const commands = path.join(state.standinState, 'commands.jsonl');
    const shellBefore = (await fs.readFile(commands, 'utf8')).length;
    await control.reset();
    const refused = await Promise.all([
      ...vsphere.map((pb) => runCli(['run', pb, '-i', inventory, '--confirm-destroy', vmfsDevice, '--out', path.join(root, 'runs')], { cwd: root })),
      ...shell.map((pb) => runCli(['run', pb, '-i', inventory, '--confirm-destroy', BLANK_DEV, '--out', path.join(root, 'runs')], { cwd: root })),
    ]);
    for (const r of refused) expect(r.code, r.stderr).toBe(2);
    // the simulator was sent nothing, not even a login
    expect(await control.calls()).toEqual({});
    // the stand-ins ran nothing: no partedUtil, no vmkfstools
    expect((await fs.readFile(commands, 'utf8')).length).toBe(shellBefore);

    // the inventory states no release: run asks the host (read-only) and refuses before any change
    const unstated = path.join(root, '.lab', 'inventory-unstated.yaml');
    await control.reset();
    const r = await runCli(['run', refusedByHost(version), '-i', unstated, '--confirm-destroy', vmfsDevice, '--out', path.join(root, 'runs')], { cwd: root });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`(the host reported ESXi ${version}.0 for target "lab-vcenter"`);
    const calls = await control.calls();
    expect(calls.Login).toBeGreaterThanOrEqual(1);
    expect(mutating(calls)).toEqual([]);
    await expect(fs.readdir(path.join(root, 'runs'))).rejects.toThrow(/ENOENT/); // no run directory either
  }, 120_000);

  if (version === '5.5') {
    it('on 5.5 a VMFS3 sweep runs as before: the datastore is VMFS3 with 8 MB blocks, and it is gone after', async () => {
      await control.reset();
      const r = await runCli(['run', small['vmfs3-8mb'], '-i', inventory, '--confirm-destroy', vmfsDevice, '--out', path.join(root, 'runs55'), '--no-report', '--json'], { cwd: root, timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').at(-2)!)).toMatchObject({ done: 1, failed: 0, leftovers: 0 });
      const calls = await control.calls();
      expect(calls).toMatchObject({ CreateVmfsDatastore: 1, RemoveDatastore: 1 });
      expect(calls.QueryVmfsConfigOption).toBeUndefined();
    }, 150_000);
  }

  // the family's other releases on this lab: its simulator switched, the stand-ins' host model as `up --version` seeds it
  if (others.length) describe.each(others)('switched to %s', (other) => {
    let seeded: string;
    beforeAll(async () => {
      // (what pyVmomi reads afterwards is the check; the call's own answer is not used: the harness
      // writes a second JSON body after it, so the client reads neither)
      await control.version(other);
      seeded = await fs.mkdtemp(path.join(root, `standin-${other}-`));
      await seedEsxiState(seeded, defaultEsxiState(other));
    });
    afterAll(async () => {
      await control?.version(version);
    });

    it('status says it for a lab recorded as it, and `up` with another release is refused', async () => {
      // this lab's state as `up --version` records it for that release (its processes: this lab's)
      const recorded = await fs.mkdtemp(path.join(root, `recorded-${other}-`));
      const p = labPaths(recorded);
      await fs.mkdir(p.dir);
      await fs.writeFile(p.state, JSON.stringify({ ...state, version: other }));
      await fs.copyFile(labPaths(root).vcsimPassword, p.vcsimPassword);
      const [text, json, up] = await Promise.all([lab(recorded, ['status']), lab(recorded, ['status', '--json']), lab(recorded, ['up', '--version', '5.5'])]);
      expect(text.stdout).toContain(`version: ESXi/vCenter ${other}`);
      expect(JSON.parse(json.stdout)).toMatchObject({ running: true, version: other });
      expect(up.code).toBe(2);
      expect(up.stderr).toContain(`the lab is running as ESXi/vCenter ${other}`);
    });

    it('the simulator reports it: ServiceContent.about and every host\'s config.product (pyVmomi)', async () => {
      await simulatorReports(sim, other);
    });

    it('the ESXi stand-ins report it: vmware -v, esxcli system version get', async () => {
      await standinsReport(seeded, other);
    });

    it(`the simulator creates VMFS ${CREATES[other].join(' and ')} only; QueryVmfsConfigOption ties unmap granularity to the block size`, async () => {
      await simulatorCreates(sim, other);
    });

    it('vmkfstools -C creates only the release\'s VMFS versions, and no VMFS5 on a 4Kn device', async () => {
      await vmkfstoolsCreates(seeded, other, root);
    });
  });
});
