// Guest I/O settings on a real block queue: a loop device of this machine (the lab guest's disks
// are loop devices), set through its sysfs, read back, and restored from what was recorded before
// the change alone (as `run --resume` after a kill -9 has it: no id, only the sent data). The
// kernel's own refusals (a depth above the tag set's with scheduler none, a depth below 4 raised
// to 4) are what the step reports; sysfs is read by the test itself, never through the module.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MeasuredTarget, ProviderContext } from '../../src/contract/provider.ts';
import { applyGuestSettings, parseSchedulerFile, restoreGuestSettings } from '../../src/providers/guest-settings.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';

const WWN = '6000c29aabbccddeeff00112233445566';
let dir: string;
let loop: string;
let byIdDir: string;
/** the loop device's settings before the test: a loop device keeps them after it is detached */
let found: { scheduler: string; depth: string };

const read = (attr: string) => fs.readFileSync(`/sys/block/${path.basename(loop)}/${attr}`, 'utf8').trim();
const guest = () => ({ byIdDir, sudo: false, open: async () => createLocalRunner(process.env) });

function context(): { ctx: ProviderContext; sent: Array<Record<string, unknown>>; said: MeasuredTarget[] } {
  const sent: Array<Record<string, unknown>> = [];
  const said: MeasuredTarget[] = [];
  const found: MeasuredTarget = { path: loop, device: loop, identity: `wwn-0x${WWN}`, filesystem: 'raw', facts: { device: loop, deviceWwn: WWN, filesystem: 'raw' } };
  const ctx: ProviderContext = {
    runId: 'r',
    permutationId: 'p',
    axes: {},
    signal: new AbortController().signal,
    log: () => undefined,
    sent: (d) => void sent.push(structuredClone(d)),
    measure: (t) => void said.push(t),
    measured: () => said.at(-1) ?? found,
  };
  return { ctx, sent, said };
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-guest-settings-'));
  fs.writeFileSync(path.join(dir, 'disk.img'), Buffer.alloc(0));
  fs.truncateSync(path.join(dir, 'disk.img'), 16 << 20);
  loop = execFileSync('losetup', ['-f', '--show', path.join(dir, 'disk.img')], { encoding: 'utf8' }).trim();
  found = { scheduler: parseSchedulerFile(read('queue/scheduler')).active, depth: read('queue/nr_requests') };
  byIdDir = path.join(dir, 'by-id');
  fs.mkdirSync(byIdDir);
  fs.symlinkSync(loop, path.join(byIdDir, `wwn-0x${WWN}`));
});

afterEach(() => {
  // left as found whatever the test did (the next user of this loop device sees its settings)
  fs.writeFileSync(`/sys/block/${path.basename(loop)}/queue/scheduler`, found.scheduler);
  fs.writeFileSync(`/sys/block/${path.basename(loop)}/queue/nr_requests`, found.depth);
  if (loop) execFileSync('losetup', ['-d', loop]);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('guest.scheduler and guest.queueDepth on a loop device of the lab guest', () => {
  it('offers what the kernel lists: the lab accepts the four blk-mq schedulers', () => {
    expect(parseSchedulerFile(read('queue/scheduler')).offered).toEqual(expect.arrayContaining(['none', 'mq-deadline', 'kyber', 'bfq']));
    expect(parseSchedulerFile('none [mq-deadline] kyber')).toEqual({ active: 'mq-deadline', offered: ['none', 'mq-deadline', 'kyber'] });
  });

  it('applies, reads back into the record, and restores from the recorded originals alone', async () => {
    const before = { scheduler: parseSchedulerFile(read('queue/scheduler')).active, depth: Number(read('queue/nr_requests')) };
    const { ctx, sent, said } = context();
    const created = await applyGuestSettings(guest(), { scheduler: 'mq-deadline', queueDepth: 64 }, { provider: 'vsphere', name: 'ss-r-p-guest-settings' }, ctx);
    expect(parseSchedulerFile(read('queue/scheduler')).active).toBe('mq-deadline');
    expect(read('queue/nr_requests')).toBe('64');
    expect(said.at(-1)!.facts).toMatchObject({ guestScheduler: 'mq-deadline', guestQueueDepth: 64, guestQueueDepthAttribute: 'queue/nr_requests', guestSchedulerBefore: before.scheduler, guestQueueDepthBefore: before.depth });
    // recorded before the first write: what a resume after kill -9 has
    expect(sent[0]).toEqual({ device: loop, byId: path.join(byIdDir, `wwn-0x${WWN}`), depthAttribute: 'queue/nr_requests', original: { scheduler: before.scheduler, queueDepth: before.depth } });
    expect(created.data).toEqual(sent[0]);
    expect(await restoreGuestSettings(guest(), { name: created.name, data: sent[0]! }, context().ctx)).toBe('removed');
    expect(parseSchedulerFile(read('queue/scheduler')).active).toBe(before.scheduler);
    expect(Number(read('queue/nr_requests'))).toBe(before.depth);
  });

  it('refuses a scheduler the device does not offer before writing anything', async () => {
    const { ctx, sent } = context();
    await expect(applyGuestSettings(guest(), { scheduler: 'deadline' }, { provider: 'vsphere', name: 'x' }, ctx)).rejects.toThrow(/offers the I\/O schedulers .*not deadline; nothing was changed/);
    expect(sent).toEqual([]);
  });

  it("reports the kernel's refusal of a depth above the tag set's, and teardown restores the scheduler written first", async () => {
    // the guest's own setting before the run: mq-deadline with the depth the kernel gives it
    fs.writeFileSync(`/sys/block/${path.basename(loop)}/queue/scheduler`, 'mq-deadline');
    const before = { scheduler: parseSchedulerFile(read('queue/scheduler')).active, depth: read('queue/nr_requests') };
    expect(before.scheduler).toBe('mq-deadline');
    const { ctx, sent } = context();
    // with scheduler none a loop queue takes no more than its tag set's depth (128 by default)
    await expect(applyGuestSettings(guest(), { scheduler: 'none', queueDepth: 1000 }, { provider: 'vsphere', name: 'x' }, ctx)).rejects.toThrow(/the kernel refused guest.queueDepth 1000/);
    expect(parseSchedulerFile(read('queue/scheduler')).active).toBe('none');
    expect(sent).toHaveLength(1);
    expect(await restoreGuestSettings(guest(), { name: 'x', data: sent[0]! }, context().ctx)).toBe('removed');
    expect(parseSchedulerFile(read('queue/scheduler')).active).toBe('mq-deadline');
    expect(read('queue/nr_requests')).toBe(before.depth);
  });

  it('refuses a depth the kernel changes (below 4 it reads back 4)', async () => {
    const { ctx } = context();
    const { sent } = context();
    const before = read('queue/nr_requests');
    await expect(applyGuestSettings(guest(), { queueDepth: 2 }, { provider: 'vsphere', name: 'x' }, { ...ctx, sent: (d) => void sent.push(structuredClone(d)) })).rejects.toThrow(/guest.queueDepth 2 was written .* reads back 4/);
    expect(read('queue/nr_requests')).toBe('4');
    expect(await restoreGuestSettings(guest(), { name: 'x', data: sent[0]! }, context().ctx)).toBe('removed');
    expect(read('queue/nr_requests')).toBe(before);
  });

  it('leaves a disk that is gone alone: the link no longer leads to the recorded device', async () => {
    const data = { device: '/dev/loop999', byId: path.join(byIdDir, `wwn-0x${WWN}`), depthAttribute: 'queue/nr_requests', original: { scheduler: 'none', queueDepth: 128 } };
    expect(await restoreGuestSettings(guest(), { name: 'x', data }, context().ctx)).toBe('absent');
  });
});
