// The playbook: a configuration matrix (axes → values), the workloads to run, how often and in
// which order. Where it runs is the inventory's business; the playbook names a target.
import { z } from 'zod';
import {
  MAX_DISK_SIZE_GB,
  MAX_FILE_SIZE_BYTES,
  MAX_PASS_SEC,
  MAX_TIMER_SEC,
  MIN_FILE_SIZE_BYTES,
} from '../limits.ts';
import { isVhdxBlockSize } from '../providers/hyperv/validate.ts';
import { axisValues, providerAxes } from '../providers/index.ts';
import type { AxisSpec } from '../contract/axis.ts';
import { intIn, numberIn } from '../input/fields.ts';
import { parseSize } from './size.ts';
import { repeatSchema } from './repeat.ts';
import { WRITE_DATA_MODES } from '../workloads/write-data.ts';
import { environmentSchema } from '../input/environment.ts';

export type { RepeatSpec } from './repeat.ts';

// Every value some provider takes (src/providers/<name>/axes.ts, through the registry); which target
// takes which is checked against the inventory (config/index.ts checkCompatibility, plan/check.ts).
const strings = (axis: string): [string, ...string[]] => {
  const values = axisValues(axis).map(String);
  if (!values.length) throw new Error(`no provider declares values for ${axis}`);
  return values as [string, ...string[]];
};
/** the numbers some provider takes on an axis, as a union of literals (JSON Schema: anyOf const) */
const numbers = (axis: string) => {
  const values = axisValues(axis).filter((v): v is number => typeof v === 'number');
  if (values.length < 2) throw new Error(`no provider declares two or more numbers for ${axis}`);
  return z.union(values.map((v) => z.literal(v)) as unknown as [z.ZodLiteral<number>, z.ZodLiteral<number>, ...Array<z.ZodLiteral<number>>]);
};
export const DATASTORE_KINDS = strings('datastore.kind');
export const DISK_FORMATS = strings('disk.format');
export const GUEST_FILESYSTEMS = strings('guest.filesystem');

/** A list of axis values: at least one, no duplicates (a duplicate would silently double a permutation). */
function axis<T extends z.ZodType>(item: T, description: string) {
  return z
    .array(item)
    .min(1, { error: 'an axis needs at least one value' })
    .superRefine((values, ctx) => {
      const seen = new Map<string, number>();
      values.forEach((v, i) => {
        const key = JSON.stringify(v);
        const first = seen.get(key);
        if (first !== undefined) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate axis value ${key} (already at index ${first})` });
        else seen.set(key, i);
      });
    })
    .describe(description);
}

/** Sanity cap for a host volume's size label (volume.sizeGb): 1 PiB. */
const MAX_VOLUME_GB = 1024 * 1024;

const shippedMatrix = z
  .strictObject({
    datastore: z
      .strictObject({
        kind: axis(z.enum(DATASTORE_KINDS), 'Datastore to create per permutation: VMFS version, NFS, or an existing datastore'),
        blockSizeMb: axis(numbers('datastore.blockSizeMb'), 'VMFS file block size in MB (VMFS3: 1/2/4/8; VMFS5/6: 1)').optional(),
        blockSizeKb: axis(numbers('datastore.blockSizeKb'), 'VMFS6 block size in KiB (64 or 1024)').optional(),
      })
      .optional(),
    disk: z
      .strictObject({
        format: axis(z.enum(DISK_FORMATS), 'Disk provisioning: VMDK thin/lazy/eager, RDM physical/virtual, Hyper-V VHDX fixed/dynamic, pass-through'),
        sizeGb: axis(numberIn(0, MAX_DISK_SIZE_GB, 'GiB', '64 TiB is the largest VHDX', false), 'Disk size in GB (GiB)').optional(),
        controller: axis(z.enum(strings('disk.controller')), 'Virtual storage controller the disk is placed on (vSphere only; one of that type is added to the VM when it has none, and removed after)').optional(),
        blockSizeBytes: axis(
          z.number().refine(isVhdxBlockSize, { error: 'expected a VHDX block size: a power of two from 1048576 (1 MiB) to 268435456 (256 MiB)' }),
          'VHDX block size in bytes',
        ).optional(),
        logicalSectorBytes: axis(numbers('disk.logicalSectorBytes'), 'VHDX logical sector size').optional(),
        physicalSectorBytes: axis(numbers('disk.physicalSectorBytes'), 'VHDX physical sector size').optional(),
        // the shape only: the name is looked up on vCenter at run start (providers/vsphere/storage-policy.ts)
        policy: axis(
          // eslint-disable-next-line no-control-regex
          z.string().refine((v) => v.trim().length > 0 && v.length <= 80 && !/[\u0000-\u001f\u007f]/.test(v), { error: 'expected a storage policy name: 1 to 80 characters, no control characters' }),
          'vCenter storage policy (SPBM) applied to the created disk, by name (vSphere only; checked on vCenter at run start)',
        ).optional(),
      })
      .optional(),
    guest: z
      .strictObject({
        filesystem: axis(
          z.enum(GUEST_FILESYSTEMS),
          'How the test disk is prepared in the guest before it is measured: raw (default: the disk itself) or a volume on it and a test file of settings.fileSize (Linux guests of vSphere and the ESXi shell: ext4, xfs — one GPT partition, mkfs, mounted; Windows guests of Hyper-V and of vSphere: ntfs-4k, ntfs-64k — NTFS allocation unit 4 KiB / 64 KiB —, refs: ReFS with 4 KiB clusters, which Microsoft documents for Windows Server; undone at teardown)',
        ).optional(),
        // Linux guests of vSphere: set in the guest's sysfs, read back, restored (providers/guest-settings.ts); the range is the provider's (its axes.ts)
        scheduler: axis(z.enum(strings('guest.scheduler')), 'Linux I/O scheduler of the disk under test (/sys/block/<dev>/queue/scheduler); refused when the guest does not offer it; restored at teardown').optional(),
        queueDepth: axis(z.number().int().positive(), "Linux queue depth of the disk under test: a SCSI disk's device/queue_depth, else the queue's nr_requests; read back, restored at teardown").optional(),
        // Windows guests of vSphere and Hyper-V: the disk's write cache policy, set with the control codes Device Manager sends (providers/windows-write-cache.ts)
        writeCache: axis(z.enum(strings('guest.writeCache')), 'Windows write cache of the disk under test (Device Manager\'s "Enable write caching on the device"): set before the passes, read back, restored at teardown').optional(),
        writeCacheFlushing: axis(z.enum(strings('guest.writeCacheFlushing')), 'Windows write-cache buffer flushing of the disk under test: off is Device Manager\'s "Turn off Windows write-cache buffer flushing"; set before the passes, read back, restored at teardown').optional(),
      })
      .optional(),
    volume: z
      .strictObject({
        sizeGb: axis(numberIn(0, MAX_VOLUME_GB, 'GiB', 'a sanity cap of 1 PiB', false), 'Host volume size in GB (Hyper-V: which volume of the inventory holds the VHDX)'),
      })
      .optional(),
    workload: z.strictObject({
      profile: axis(z.string().min(1), 'Workload: a preset (cdm8-default, cdm3, …), an IOMeter spec ("4k 50% read 100% random") or a name under workloads:'),
    }),
  })
  .describe('The configuration matrix: every combination of the values below is one permutation');

/** An axis value's schema from its provider's declaration: one of its values, or what its rule accepts. */
function axisElement(spec: AxisSpec): z.ZodType {
  const values = spec.values;
  if (!values) return z.union([z.string(), z.number(), z.boolean()]).refine((v) => spec.accepts?.(v) ?? true, { error: `expected ${spec.expected ?? 'a value'}` });
  if (values.every((v) => typeof v === 'string')) return z.enum(values as [string, ...string[]]);
  const literals = values.map((v) => z.literal(v));
  return literals.length === 1 ? literals[0]! : z.union(literals as unknown as [z.ZodLiteral, z.ZodLiteral, ...z.ZodLiteral[]]);
}

/**
 * The matrix with every axis a provider declares that the sections above do not spell out (a
 * provider added since, in its own folder): `<section>.<key>` from its axis name, its values or
 * rule from its declaration. The shipped providers' axes are all above, so for them this is the
 * schema above itself (and the generated JSON Schema is unchanged).
 */
function withProviderAxes<T extends z.ZodObject>(m: T): T {
  const shape: Record<string, z.ZodType> = { ...m.shape };
  let added = false;
  for (const spec of providerAxes()) {
    const [section, key, ...rest] = spec.name.split('.');
    if (!section || !key || rest.length || section === 'workload') continue;
    const existing = shape[section];
    const obj = existing === undefined ? undefined : ((existing instanceof z.ZodOptional ? existing.unwrap() : existing) as z.ZodObject);
    if (obj && key in obj.shape) continue;
    const item = axis(axisElement(spec), spec.values ? `${spec.name}: ${spec.values.join(', ')}` : `${spec.name}: ${spec.expected ?? 'any value'}`).optional();
    shape[section] = (obj ? obj.extend({ [key]: item }) : z.strictObject({ [key]: item })).optional();
    added = true;
  }
  return added ? (z.strictObject(shape).describe(m.description ?? '') as unknown as T) : m;
}

export const matrixSchema = withProviderAxes(shippedMatrix);

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const axisMap = z.record(z.string(), scalar);

const scalarOption = z.union([z.string(), z.number(), z.boolean()]);
export const inlineWorkloadSchema = z.strictObject({
  name: z.string().optional(),
  base: z.string().optional().describe('Preset whose timing applies (default cdm8-default)'),
  iometer: z.union([z.string(), z.array(z.string()).min(1)]).optional().describe('IOMeter access spec(s), e.g. "32k 100% read 0% random"'),
  fio: z.union([z.record(z.string(), scalarOption), z.array(z.record(z.string(), scalarOption)).min(1)]).optional().describe('Custom fio job option(s)'),
  diskspd: z.union([z.string(), z.array(z.string()), z.array(z.array(z.string()))]).optional().describe('Custom diskspd parameters'),
});

const SIZE_TEXT = /^\d+(\.\d+)?\s*[kKmMgGtT]?i?[bB]?$/;
const sizeRange = `from 1m to 64t (${MIN_FILE_SIZE_BYTES} to ${MAX_FILE_SIZE_BYTES} bytes; 64 TiB is the largest VHDX)`;
const sizeString = z
  .union([z.number(), z.string().regex(SIZE_TEXT, { error: 'expected a size like 64m, 1g, 1024m or a number of bytes' })])
  .superRefine((v, ctx) => {
    if (typeof v === 'string' && !SIZE_TEXT.test(v)) return; // the regex above reported it
    const bytes = parseSize(v);
    if (!Number.isInteger(bytes) || bytes < MIN_FILE_SIZE_BYTES || bytes > MAX_FILE_SIZE_BYTES) ctx.addIssue({ code: 'custom', message: `expected a size ${sizeRange}; got ${v}` });
  });

/** Whole seconds within one pass (runtime, warm-up, slack, pause between tests). */
const passSeconds = (min: number) => intIn(min, MAX_PASS_SEC, 'whole seconds', 'a day per pass at most');

export const settingsSchema = z
  .strictObject({
    fileSize: sizeString.optional().describe('Test file size, e.g. 1g (binary units)'),
    runtimeSec: passSeconds(1).optional().describe('Measured seconds per pass'),
    rampSec: passSeconds(0).optional().describe('Unmeasured warm-up seconds per pass (fio ramp_time, diskspd -W)'),
    passes: intIn(1, 100, 'a number of passes').optional(),
    warmupPass: z.boolean().optional().describe('One unscored pass before the measured passes of each test (CrystalDiskMark pass 0)'),
    prefill: z.boolean().optional().describe('Fill the test region once per permutation with incompressible data before the first pass (default true)'),
    prefillMBps: numberIn(1, 100_000, 'MB/s', 'the estimate only').optional().describe('Write throughput (MB/s) the plan assumes to estimate the pre-fill (default 100); the fill itself runs as fast as the disk takes it'),
    writeData: z.enum(WRITE_DATA_MODES).optional().describe('What diskspd writes: cdm (default) = one random block-sized buffer for every write, as CrystalDiskMark; unique = a random buffer as large as the test region (at most 1 GiB), near-unique data for comparing with fio or on storage that deduplicates or compresses; the fill too'),
    intervalSec: numberIn(0, MAX_PASS_SEC, 'seconds', 'a day at most').optional().describe('Idle seconds between tests'),
    direct: z.boolean().optional(),
    aggregate: z.enum(['max', 'mean', 'median', 'last']).optional(),
    stopAfterSameFailure: intIn(0, 1000, 'a number of permutations').optional().describe('Stop the run when one step fails with the same cause on this many permutations in a row (default 3; 0: never)'),
  })
  .describe('Overrides of the workload presets\' timing for this playbook');

export { environmentSchema, environmentText } from '../input/environment.ts';

export const playbookSchema = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, { error: 'expected a lowercase name of letters, digits and dashes' }),
    description: z.string().optional(),
    target: z
      .union([z.string().min(1), axis(z.string().min(1), 'Names of targets in the inventory')])
      .describe('Name of a target in the inventory, or a list of names: then `target` is the first axis and permutations on different targets run in parallel'),
    matrix: matrixSchema,
    lackingAxes: z
      .enum(['once', 'perValue'])
      .optional()
      .describe(
        'With several targets: how a target runs whose provider lacks an axis another target takes (an ssh or local target provisions nothing: it has no datastore or disk axis). once (default): its workload once, shown as the reference row and compared with every value; perValue: once per value of the axes it lacks',
      ),
    workloads: z.record(z.string(), inlineWorkloadSchema).optional().describe('Named custom workloads, usable in matrix.workload.profile'),
    settings: settingsSchema.optional(),
    include: z.array(axisMap).optional().describe('Extra permutations (a full set of axis values each)'),
    exclude: z.array(axisMap).optional().describe('Drop every permutation matching all of the given axis values'),
    repeat: repeatSchema,
    order: z
      .strictObject({
        randomize: z.boolean().default(false),
        seed: z.number().int().optional(),
      })
      .optional(),
    baseline: axisMap.optional().describe('Axis values the reports compare against, e.g. {datastore.blockSizeMb: 1}'),
    environment: environmentSchema.optional(),
    environmentOf: z
      .record(z.string(), environmentSchema)
      .optional()
      .describe('Facts per axis value, keyed axis=value, e.g. {"target=array-01": {array: PowerStore 500T, raid: RAID 5}, "datastore.kind=nfs": {protocol: NFS v3}}: stored with the run, shown beside the fingerprint'),
    timeouts: z
      .strictObject({
        stepSec: intIn(1, MAX_TIMER_SEC, 'whole seconds', "Node's timer limit").optional().describe('Limit for each provisioning step'),
        workloadSlackSec: passSeconds(1).optional().describe('Allowed beyond a pass\'s runtime before it is declared hung'),
      })
      .optional(),
  })
  .describe('storsweep playbook');

export type Playbook = z.output<typeof playbookSchema>;
export type Matrix = z.output<typeof matrixSchema>;
export type InlineWorkload = z.output<typeof inlineWorkloadSchema>;

/** The playbook's target names: one for `target: name`, every listed one for `target: [a, b]`. */
export function targetNames(pb: Pick<Playbook, 'target'>): string[] {
  return typeof pb.target === 'string' ? [pb.target] : pb.target;
}

/** Flat axis names (`disk.format`) with their values in playbook order. */
export function matrixAxes(matrix: Matrix): Array<{ name: string; values: Array<string | number | boolean> }> {
  const out: Array<{ name: string; values: Array<string | number | boolean> }> = [];
  for (const [section, keys] of Object.entries(matrix)) {
    if (!keys) continue;
    for (const [key, values] of Object.entries(keys as Record<string, unknown>)) {
      if (Array.isArray(values)) out.push({ name: `${section}.${key}`, values: values as Array<string | number | boolean> });
    }
  }
  return out;
}
