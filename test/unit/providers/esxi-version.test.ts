// What an ESXi release can create, and VMFS3's file-size caps, as the vSphere Storage guides and the
// vSphere 4.1 Configuration Maximums document them — written out here so the code's rule
// (src/providers/esxi-version.ts) must agree with the documents, not define them. Both planners ask it.
import { describe, expect, it } from 'vitest';
import { InvalidArgument } from '../../../src/errors.ts';
import { checkVmfs3FileSize, parseEsxiVersion, vmfs3MaxFileBytes, vmfsCreatable } from '../../../src/providers/esxi-version.ts';
import { planEsxiShellSteps } from '../../../src/providers/esxi-shell/plan.ts';
import { planVsphereSteps } from '../../../src/providers/vsphere/steps.ts';
import { inventorySchema } from '../../../src/config/inventory.ts';

const GiB = 1024 ** 3;
const DEV = 'naa.6000c2900000000000000000000000a1';
const plan = {
  vsphere: (axes: Record<string, string | number>, version?: string) => planVsphereSteps(axes, { host: 'esx01', vm: 'vm', vmfsDevice: DEV, allowedDevices: [DEV], version }, { prefix: 'ss-r1-p1' }),
  'esxi-shell': (axes: Record<string, string | number>, version?: string) => planEsxiShellSteps(axes, { host: 'esx1', vmid: '1', vmfsDevice: DEV, allowedDevices: [DEV], version }, { base: 'ss-r1-p1' }),
};
const refusal = (f: () => unknown): InvalidArgument | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgument);
    return err as InvalidArgument;
  }
};

// vSphere 6.0 Storage "Understanding VMFS Datastores" (no new VMFS3 from 6.0), 7.0 Storage "Versions
// of VMFS Datastores" (VMFS6: 6.5 and later)
const DOCUMENTED: Record<string, string[]> = {
  '5.5': ['vmfs3', 'vmfs5'],
  '6.0': ['vmfs5'],
  '6.5': ['vmfs5', 'vmfs6'],
  '6.7': ['vmfs5', 'vmfs6'],
  '7.0': ['vmfs5', 'vmfs6'],
  '8.0': ['vmfs5', 'vmfs6'],
};

describe('VMFS versions an ESXi release creates', () => {
  it.each(Object.entries(DOCUMENTED))('ESXi %s creates %j', (version, kinds) => {
    const v = parseEsxiVersion(version)!;
    for (const kind of ['vmfs3', 'vmfs5', 'vmfs6'] as const) {
      expect(vmfsCreatable(kind, v), `${kind} on ${version}`).toBe(kinds.includes(kind));
      for (const [name, planner] of Object.entries(plan)) {
        const err = refusal(() => planner({ 'datastore.kind': kind, 'disk.format': 'thin', 'disk.sizeGb': 4 }, version));
        expect(err === undefined, `${name} ${kind} on ${version}`).toBe(kinds.includes(kind));
        if (err) expect(err.details.name).toBe('datastore.kind');
      }
    }
  });

  it('a version the host reports (8.0.3) is its release; without a version nothing is refused for it', () => {
    expect(parseEsxiVersion('8.0.3')).toEqual({ major: 8, minor: 0 });
    expect(parseEsxiVersion('4.1')).toBeUndefined();
    expect(refusal(() => plan.vsphere({ 'datastore.kind': 'vmfs3', 'disk.format': 'thin', 'disk.sizeGb': 4 }))).toBeUndefined();
  });

  it('the message says what the release creates and that VMFS3 needs 5.x', () => {
    expect(refusal(() => plan.vsphere({ 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': 8, 'disk.format': 'thin', 'disk.sizeGb': 4 }, '8.0'))?.message).toBe(
      'datastore.kind vmfs3: esx01 runs ESXi 8.0, which creates vmfs5, vmfs6 only (ESXi 6.0 and later cannot create VMFS3, only mount existing VMFS3 volumes; a VMFS3 study needs an ESXi 5.x host)',
    );
  });

  it('datastore.blockSizeKb (HostVmfsSpec.blockSize) needs a 6.5+ host', () => {
    expect(refusal(() => plan.vsphere({ 'datastore.kind': 'vmfs5', 'datastore.blockSizeKb': 1024, 'disk.format': 'thin', 'disk.sizeGb': 4 }, '5.5'))?.details.name).toBe('datastore.blockSizeKb');
    expect(refusal(() => plan.vsphere({ 'datastore.kind': 'vmfs5', 'datastore.blockSizeKb': 1024, 'disk.format': 'thin', 'disk.sizeGb': 4 }, '6.7'))).toBeUndefined();
  });
});

describe('VMFS3 file size by block size (vSphere 4.1 Configuration Maximums)', () => {
  // 1 MB → 256 GB, 2 MB → 512 GB, 4 MB → 1 TB, 8 MB → 2 TB minus 512 B
  const documented: Record<number, number> = { 1: 256 * GiB, 2: 512 * GiB, 4: 1024 * GiB, 8: 2048 * GiB - 512 };
  it.each(Object.entries(documented))('%s MiB blocks: %d bytes', (mb, bytes) => {
    expect(vmfs3MaxFileBytes(Number(mb))).toBe(bytes);
  });

  it.each([
    [1, 256, 257],
    [2, 512, 513],
    [4, 1024, 1025],
    [8, 2047, 2048],
  ])('%s MiB blocks: %s GiB fits, %s GiB is refused at disk.sizeGb by both planners', (mb, fits, over) => {
    expect(() => checkVmfs3FileSize(mb, fits)).not.toThrow();
    for (const [name, planner] of Object.entries(plan)) {
      const axes = { 'datastore.kind': 'vmfs3', 'datastore.blockSizeMb': mb, 'disk.format': 'eagerzeroedthick' };
      expect(refusal(() => planner({ ...axes, 'disk.sizeGb': fits }, '5.5')), `${name} ${fits}`).toBeUndefined();
      expect(refusal(() => planner({ ...axes, 'disk.sizeGb': over }, '5.5'))?.details.name, `${name} ${over}`).toBe('disk.sizeGb');
    }
  });

  it('VMFS5 has no such cap: 300 GiB on 1 MiB blocks plans', () => {
    expect(refusal(() => plan.vsphere({ 'datastore.kind': 'vmfs5', 'datastore.blockSizeMb': 1, 'disk.format': 'thin', 'disk.sizeGb': 300 }, '8.0'))).toBeUndefined();
  });
});

describe('inventory version', () => {
  const target = (version: unknown) => ({ targets: { e: { provider: 'esxi-shell', sshHost: 'h', vmid: 1, version, guest: { workdir: '/tmp/x' } } } });
  it('takes "8.0", "6.7.0" and an unquoted YAML number (8.0 reads as 8) as the release', () => {
    const versionOf = (v: unknown) => {
      const t = inventorySchema().parse(target(v)).targets.e!;
      return t.provider === 'esxi-shell' ? t.version : undefined;
    };
    expect(versionOf('8.0')).toBe('8.0');
    expect(versionOf('6.7.0')).toBe('6.7.0');
    expect(versionOf(8)).toBe('8.0');
    expect(versionOf(6.7)).toBe('6.7');
  });
  it('refuses what is no ESXi release', () => {
    for (const v of ['latest', '4.1', '8', 80]) expect(inventorySchema().safeParse(target(v)).success, String(v)).toBe(false);
  });
});
