// Numeric limits every layer shares: the config schema and the CLI refuse a value outside them with
// the range in the message, and the timer helpers refuse one again rather than misbehave. Each limit
// is either a real tool's (cited) or a documented sanity cap (docs/decisions.md, "Numeric limits").
import { InvalidArgument } from './errors.ts';

/**
 * Node's timers take a 32-bit signed delay: "When delay is larger than 2147483647 or less than 1,
 * the delay will be set to 1" (Node.js docs, timers, setTimeout) — a 25-day timeout would fire at
 * once. Every duration that ends up in a timer stays at or below this.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** The same limit in whole seconds: 2147483 (24.8 days). */
export const MAX_TIMER_SEC = Math.floor(MAX_TIMER_MS / 1000);

/**
 * Sanity cap for one pass's runtime, warm-up, slack and the pause between tests: a day. Together a
 * pass's timer (runtime + ramp + slack) stays far below MAX_TIMER_SEC.
 */
export const MAX_PASS_SEC = 86_400;

/**
 * Outstanding I/Os per job/thread (fio iodepth, diskspd -o/-O, IOMeter q). fio has no maximum of its
 * own (fio:options.c `iodepth`: minval 1 only), but its async engines hit the kernel's: io_uring
 * refuses more than IORING_MAX_ENTRIES = 32768 entries (linux:io_uring/io_uring.h), and libaio's
 * io_setup shares /proc/sys/fs/aio-max-nr (default 65536) among all processes. diskspd only needs
 * -o > 0 (diskspd:CmdLineParser.cpp, atoi); the same cap applies to it.
 */
export const MAX_QUEUE_DEPTH = 32_768;

/**
 * Jobs/threads per test (fio numjobs, diskspd -t/-F, IOMeter t). fio refuses more than REAL_MAX_JOBS
 * = 4096 jobs ("error: maximum number of jobs reached", fio:fio.h, init.c get_new_job); diskspd only
 * needs -t > 0 (diskspd:CmdLineParser.cpp) and gets the same cap.
 */
export const MAX_THREADS = 4096;

const TiB = 1024 ** 4;
/**
 * Test file size: at most 64 TiB, the largest VHDX (New-VHD -SizeBytes, Learn "VHDX format") and more
 * than the largest VMDK (62 TB); at least 1 MiB, the largest block size of the presets.
 */
export const MAX_FILE_SIZE_BYTES = 64 * TiB;
export const MIN_FILE_SIZE_BYTES = 1024 ** 2;

/**
 * Block size (fio bs/ba/buffer_compress_chunk, diskspd -b): a sanity cap of 64 MiB, 64 times the
 * largest block of the presets. fio itself keeps bs in an unsigned int (fio:thread_options.h), and
 * allocates bs × iodepth of buffers per job: a 4 GiB block at the queue-depth cap would ask the guest
 * for far more memory than it has.
 */
export const MAX_BLOCK_SIZE_BYTES = 64 * 1024 ** 2;

/**
 * fio keeps most counts in a C `unsigned int` (fio:thread_options.h: fsync_blocks, rate_iops,
 * iodepth_batch, …): a larger number cannot mean what it says.
 */
export const MAX_FIO_UINT = 2 ** 32 - 1;

/** Virtual disk size in GiB: 64 TiB, the largest VHDX; ESXi's own 62 TiB limit is checked per target. */
export const MAX_DISK_SIZE_GB = 65_536;

/**
 * A delay for setTimeout, refused (InvalidArgument) when it is not a whole number of ms from 1 to
 * MAX_TIMER_MS: a caller that gets here with such a value has a bug the config should have caught,
 * and firing at once (Node's behaviour) would kill a benchmark or time out every step.
 */
export function checkTimerMs(ms: number, what: string): number {
  if (!Number.isFinite(ms) || ms < 1 || ms > MAX_TIMER_MS) {
    throw new InvalidArgument(`${what}: a timeout of ${ms} ms is outside 1 to ${MAX_TIMER_MS} ms (Node's timer limit)`, { name: what, value: String(ms) });
  }
  return Math.round(ms);
}

/**
 * The playbook's `environment:` (free facts about the setup the reports show): at most this many
 * entries, keys of at most MAX_ENVIRONMENT_KEY characters, values of at most
 * MAX_ENVIRONMENT_VALUE — a line in a report table, not a document.
 */
export const MAX_ENVIRONMENT_ENTRIES = 32;
export const MAX_ENVIRONMENT_KEY = 64;
export const MAX_ENVIRONMENT_VALUE = 200;

/**
 * Sanity cap for `vm.count`, the VMs one permutation clones and measures at once
 * (providers/vsphere/vm-count.ts): each is a full clone made one after another, so 64 already
 * means an hour of cloning per permutation before anything is measured.
 */
export const MAX_VM_COUNT = 64;
