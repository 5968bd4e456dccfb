// The playbook: a configuration matrix (axes → values), the workloads to run, how often and in
// which order. Where it runs is the inventory's business; the playbook names a target.
import { z } from 'zod';
import {
  MAX_DISK_SIZE_GB,
  MAX_ENVIRONMENT_ENTRIES,
  MAX_ENVIRONMENT_KEY,
  MAX_ENVIRONMENT_VALUE,
  MAX_FILE_SIZE_BYTES,
  MAX_PASS_SEC,
  MAX_TIMER_SEC,
  MIN_FILE_SIZE_BYTES,
} from '../limits.ts';
import { visible } from '../text/visible.ts';
import { isVhdxBlockSize } from '../providers/hyperv/validate.ts';
import { axisValues } from '../providers/index.ts';
import { intIn, numberIn } from '../input/fields.ts';
import { parseSize } from './size.ts';
import { repeatSchema } from './repeat.ts';
import { WRITE_DATA_MODES } from '../workloads/write-data.ts';

export type { RepeatSpec } from './repeat.ts';

// Every value some provider takes (src/providers/<name>/axes.ts, through the registry); which target
// takes which is checked against the inventory (config/index.ts checkCompatibility, plan/check.ts).
const strings = (axis: string): [string, ...string[]] => {
  const values = axisValues(axis).map(String);
  if (!values.length) throw new Error(`no provider declares values for ${axis}`);
  return values as [string, ...string[]];
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

export const matrixSchema = z
  .strictObject({
    datastore: z
      .strictObject({
        kind: axis(z.enum(DATASTORE_KINDS), 'Datastore to create per permutation: VMFS version, NFS, or an existing datastore'),
        blockSizeMb: axis(z.union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)]), 'VMFS file block size in MB (VMFS3: 1/2/4/8; VMFS5/6: 1)').optional(),
        blockSizeKb: axis(z.union([z.literal(64), z.literal(1024)]), 'VMFS6 block size in KiB (64 or 1024)').optional(),
      })
      .optional(),
    disk: z
      .strictObject({
        format: axis(z.enum(DISK_FORMATS), 'Disk provisioning: VMDK thin/lazy/eager, RDM physical/virtual, Hyper-V VHDX fixed/dynamic, pass-through'),
        sizeGb: axis(numberIn(0, MAX_DISK_SIZE_GB, 'GiB', '64 TiB is the largest VHDX', false), 'Disk size in GB (GiB)').optional(),
        controller: axis(z.enum(['pvscsi', 'lsilogic', 'lsisas', 'buslogic', 'nvme']), 'Virtual storage controller the disk is placed on (vSphere only; one of that type is added to the VM when it has none, and removed after)').optional(),
        blockSizeBytes: axis(
          z.number().refine(isVhdxBlockSize, { error: 'expected a VHDX block size: a power of two from 1048576 (1 MiB) to 268435456 (256 MiB)' }),
          'VHDX block size in bytes',
        ).optional(),
        logicalSectorBytes: axis(z.union([z.literal(512), z.literal(4096)]), 'VHDX logical sector size').optional(),
        physicalSectorBytes: axis(z.union([z.literal(512), z.literal(4096)]), 'VHDX physical sector size').optional(),
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
        ),
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
  })
  .describe('Overrides of the workload presets\' timing for this playbook');

/**
 * Facts about the setup that no host reports (array model, RAID level, protocol, QoS, VM spec):
 * stored with the run and shown in its reports beside the measured fingerprint. Plain one-line text
 * only — no control, bidi or line-separator character (they would reach a terminal or a report raw),
 * bounded sizes (src/limits.ts); numbers and booleans are kept as written.
 */
const ENVIRONMENT_KEY = /^[A-Za-z][A-Za-z0-9_./-]*$/;
const environmentValue = z.union(
  [
    z
      .string()
      .max(MAX_ENVIRONMENT_VALUE, { error: `expected at most ${MAX_ENVIRONMENT_VALUE} characters of plain text` })
      .refine((v) => visible(v) === v, { error: 'expected plain one-line text: no control, bidi or line-separator character (newline, tab, escape, U+202E, …)' }),
    z.number().refine(Number.isFinite, { error: 'expected a finite number' }),
    z.boolean(),
  ],
  { error: 'expected one line of text, a number or true/false' },
);
export const environmentSchema = z
  .record(z.string(), environmentValue)
  .superRefine((env, ctx) => {
    const keys = Object.keys(env);
    if (keys.length > MAX_ENVIRONMENT_ENTRIES) ctx.addIssue({ code: 'custom', message: `expected at most ${MAX_ENVIRONMENT_ENTRIES} entries; got ${keys.length}` });
    for (const k of keys) {
      if (!ENVIRONMENT_KEY.test(k) || k.length > MAX_ENVIRONMENT_KEY) {
        ctx.addIssue({ code: 'custom', path: [k], message: `expected a key of at most ${MAX_ENVIRONMENT_KEY} letters, digits, \`_\`, \`.\`, \`/\` and \`-\`, starting with a letter (e.g. array, raid, vm.cpu)` });
      }
    }
    // keys are checked even when a value is wrong, so every problem is reported at once
  }, { when: (p) => typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value) })
  .describe('Facts about the setup the reports show beside the measured fingerprint, e.g. {array: PowerStore 500T, raid: RAID 5, protocol: iSCSI 25GbE, qos: none, vm: 4 vCPU 16 GiB}');

/** The environment as the run stores it: every value as text. */
export function environmentText(env: z.output<typeof environmentSchema> | undefined): Record<string, string> | undefined {
  if (!env || Object.keys(env).length === 0) return undefined;
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

export const playbookSchema = z
  .strictObject({
    $schema: z.string().optional(),
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, { error: 'expected a lowercase name of letters, digits and dashes' }),
    description: z.string().optional(),
    target: z
      .union([z.string().min(1), axis(z.string().min(1), 'Names of targets in the inventory')])
      .describe('Name of a target in the inventory, or a list of names: then `target` is the first axis and permutations on different targets run in parallel'),
    matrix: matrixSchema,
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
