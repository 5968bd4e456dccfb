// The guest-settings operation's verify (Provider.verify after apply) on a real loop device: it
// reads the settings back from sysfs, passes while they are what the step wrote, and is a mismatch
// when something changed them since. The loop device is left with the settings it had.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { MeasuredTarget, PlannedStep, ProviderContext } from '../../src/contract/provider.ts';
import { parseSchedulerFile } from '../../src/providers/guest-settings.ts';
import { guestSettings } from '../../src/providers/vsphere/operations/guest-settings.ts';
import type { VsphereHost } from '../../src/providers/vsphere/host.ts';
import { createLocalRunner } from '../../src/ssh/local-runner.ts';

const WWN = '6000c29aabbccddeeff00112233445577';
let dir: string;
let loop: string;
let found: { scheduler: string; depth: string };
const sysfs = (attr: string) => `/sys/block/${path.basename(loop)}/${attr}`;
const read = (attr: string) => fs.readFileSync(sysfs(attr), 'utf8').trim();

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-guest-verify-'));
  fs.writeFileSync(path.join(dir, 'disk.img'), Buffer.alloc(0));
  fs.truncateSync(path.join(dir, 'disk.img'), 16 << 20);
  loop = execFileSync('losetup', ['-f', '--show', path.join(dir, 'disk.img')], { encoding: 'utf8' }).trim();
  found = { scheduler: parseSchedulerFile(read('queue/scheduler')).active, depth: read('queue/nr_requests') };
  fs.mkdirSync(path.join(dir, 'by-id'));
  fs.symlinkSync(loop, path.join(dir, 'by-id', `wwn-0x${WWN}`));
});

afterEach(() => {
  fs.writeFileSync(sysfs('queue/scheduler'), found.scheduler);
  fs.writeFileSync(sysfs('queue/nr_requests'), found.depth);
  execFileSync('losetup', ['-d', loop]);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('verify reads the written settings back from sysfs and refuses one changed since', async () => {
  const host = { opts: { guest: { byIdDir: path.join(dir, 'by-id'), sudo: false, open: async () => createLocalRunner(process.env) } } } as unknown as VsphereHost;
  const disk: MeasuredTarget = { path: loop, device: loop, identity: `wwn-0x${WWN}`, filesystem: 'raw', facts: { device: loop, deviceWwn: WWN, filesystem: 'raw' } };
  const args = { host: 'esx', vm: 'vm', scheduler: 'mq-deadline' as const, queueDepth: 64 };
  const step: PlannedStep = guestSettings.step({ step: 'guest-settings', arguments: args, destructive: false, creates: { kind: 'guest-settings', name: 'p-guest-settings' } });
  const ctx: ProviderContext = { runId: 'r', permutationId: 'p', axes: {}, signal: new AbortController().signal, log: () => undefined, sent: () => undefined, measure: () => undefined, measured: () => disk };
  const created = await guestSettings.apply!(args, { ...ctx, step, host });
  expect(created).not.toBeNull();
  expect(parseSchedulerFile(read('queue/scheduler')).active).toBe('mq-deadline');
  await expect(guestSettings.verify!(args, created!, { ...ctx, step, host })).resolves.toBeUndefined();
  // something else changes the depth after the step: verify reads sysfs, not what apply returned
  fs.writeFileSync(sysfs('queue/nr_requests'), '32');
  await expect(guestSettings.verify!(args, created!, { ...ctx, step, host })).rejects.toThrow(/guest\.queueDepth of .* is 32, not 64/);
  // teardown through the operation's object kind restores what was there before
  await expect(guestSettings.objects!['guest-settings']!.destroy({ ...created!, id: created!.id ?? null }, { ...ctx, host })).resolves.toBe('removed');
  expect(parseSchedulerFile(read('queue/scheduler')).active).toBe(found.scheduler);
  expect(read('queue/nr_requests')).toBe(found.depth);
});
