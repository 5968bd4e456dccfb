// The lab's Windows guest answers the write cache script as disk.sys would (its model:
// src/lab/harness/windows/disk_cache.py, from Windows-driver-samples storage/class/disk/src): the
// stand-in run as the vcsim harness runs it (vsphere_guest.py <powershell.exe> <arguments>, its
// guest file system, disk model and state in a temp directory), with the exact script storsweep
// sends. Checked in the stand-in's state file: a set changes the device and stores the user value
// for the slot; a device that rejects the change fails the set, stores the value anyway and says
// ModifyUnsuccessful; a disk starting in a slot gets the stored value; another script is refused.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildScript, encodeCommand, POWERSHELL_ARGV } from '../../src/providers/hyperv/powershell.ts';
import { TOOLS_GUEST_CACHE_BODY } from '../../src/providers/windows-write-cache-script.ts';
import { REPO_ROOT } from '../helpers/cli.ts';

const STANDIN = path.join(REPO_ROOT, 'src/lab/harness/windows/vsphere_guest.py');
const POWERSHELL = 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe';
const SYSTEM = { slot: 'scsi0:0', serial: '6000c290000000000000000000000000', size: 40 * 2 ** 30, atStart: true };
const DATA = { slot: 'scsi0:1', serial: '6000c29aaaaaaaaaaaaaaaaaaaaaaaaa', size: 2 ** 30, atStart: true };

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ss-wccache-'));
  await fs.mkdir(path.join(dir, 'fs', 'C', 'storsweep'), { recursive: true });
  await model([SYSTEM, DATA]);
});
afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

const model = (disks: object[]) => fs.writeFile(path.join(dir, 'model.json'), JSON.stringify({ vmName: 'VM1', disks }));
const state = async () => JSON.parse(await fs.readFile(path.join(dir, 'state.json'), 'utf8')) as { vm: { guestDisks: Record<string, string>; diskParameters?: Record<string, Record<string, number>> }; media: Record<string, { cache?: Record<string, boolean> }> };

/** The guest's powershell.exe with `body` and its data, as guest-runner.ts starts it; exit code, the out file's text, the err file's. */
async function powershell(body: string, data: Record<string, unknown>): Promise<{ code: number; out: string; err: string }> {
  const files = { out: 'C:\\storsweep\\c.out', err: 'C:\\storsweep\\c.err' };
  const args = [...POWERSHELL_ARGV.slice(1), encodeCommand(buildScript(body, { ...data, ...files }))].join(' ');
  const exit = path.join(dir, 'exit');
  await new Promise<void>((resolve) => {
    execFile('python3', [STANDIN, POWERSHELL, args], { env: { PATH: '/usr/bin:/bin', STORSWEEP_GUEST_FS: path.join(dir, 'fs'), STORSWEEP_GUEST_MODEL: path.join(dir, 'model.json'), STORSWEEP_GUEST_STATE: path.join(dir, 'state.json'), STORSWEEP_GUEST_CWD: 'C:\\storsweep', STORSWEEP_GUEST_EXIT: exit } }, () => resolve());
  });
  const read = (f: string) => fs.readFile(path.join(dir, 'fs', 'C', 'storsweep', f), 'utf8').catch(() => '');
  const r = { code: Number(await fs.readFile(exit, 'utf8')), out: await read('c.out'), err: await read('c.err') };
  await fs.rm(path.join(dir, 'fs', 'C', 'storsweep', 'c.out'), { force: true });
  await fs.rm(path.join(dir, 'fs', 'C', 'storsweep', 'c.err'), { force: true });
  return r;
}
const cache = (disk: number, writeCache: string, flushing = 'read') => powershell(TOOLS_GUEST_CACHE_BODY, { disk, writeCache, flushing });
const diskOf = async (slot: string) => Number(Object.entries((await state()).vm.guestDisks).find(([, s]) => s === slot)![0]);

describe('the Windows guest stand-in and the write cache script', () => {
  it('reads, sets at once (the device reads back the new value) and stores the value for the slot', async () => {
    const read = await cache(1, 'read');
    expect(read.code, read.err).toBe(0);
    const n = await diskOf(DATA.slot);
    expect(JSON.parse(await cache(n, 'read').then((r) => r.out))).toEqual({ WriteCacheEnabled: true, ReadCacheEnabled: true, ParametersSavable: false, IsPowerProtected: false, State: 'Normal' });
    const set = await cache(n, 'disabled');
    expect(set.code, set.err).toBe(0);
    expect(JSON.parse(set.out)).toMatchObject({ WriteCacheEnabled: false, State: 'Normal' });
    const st = await state();
    expect(st.media[DATA.slot]!.cache).toMatchObject({ WCE: false });
    expect(st.vm.diskParameters?.[DATA.slot]).toEqual({ UserWriteCacheSetting: 0 });
  });

  it('a device that rejects the change: the set fails, the value is stored anyway, State says ModifyUnsuccessful', async () => {
    await cache(0, 'read');
    const n = await diskOf(DATA.slot);
    const st = await state();
    (st.media[DATA.slot] as { cache: Record<string, boolean> }).cache.wceChangeable = false;
    await fs.writeFile(path.join(dir, 'state.json'), JSON.stringify(st));
    const set = await cache(n, 'disabled');
    expect(set.code).toBe(1);
    expect(set.err).toMatch(/^Exception calling "Run" with "3" argument\(s\): "Incorrect function"/);
    const after = await cache(n, 'read');
    expect(JSON.parse(after.out)).toMatchObject({ WriteCacheEnabled: true, State: 'ModifyUnsuccessful' });
    expect((await state()).vm.diskParameters?.[DATA.slot]).toEqual({ UserWriteCacheSetting: 0 });
  });

  it('flushing off is IsPowerProtected, taken at once and stored for the slot; the device is not touched', async () => {
    await cache(0, 'read');
    const n = await diskOf(DATA.slot);
    const r = await cache(n, 'read', 'off');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ WriteCacheEnabled: true, IsPowerProtected: true, State: 'Normal' });
    expect((await state()).vm.diskParameters?.[DATA.slot]).toEqual({ CacheIsPowerProtected: 1 });
    expect(JSON.parse((await cache(n, 'read', 'on')).out)).toMatchObject({ IsPowerProtected: false });
  });

  it('a disk that starts in a slot gets the value stored for it (DiskStartFdo)', async () => {
    await cache(0, 'read');
    const n = await diskOf(DATA.slot);
    expect((await cache(n, 'disabled')).code).toBe(0);
    // another disk in that slot: a new device starts there
    await model([SYSTEM, { ...DATA, serial: '6000c29bbbbbbbbbbbbbbbbbbbbbbbbb', atStart: false }]);
    const r = await cache(n, 'read');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ WriteCacheEnabled: false });
  });

  it('no such disk: CreateFile fails; another script shape is refused', async () => {
    const r = await cache(9, 'read');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/"The system cannot find the file specified"/);
    const other = await powershell(TOOLS_GUEST_CACHE_BODY.replace('info.ParametersSavable = false;', 'info.ParametersSavable = true;'), { disk: 1, writeCache: 'disabled', flushing: 'read' });
    expect(other.code).toBe(65 & 0xff);
  });
});
