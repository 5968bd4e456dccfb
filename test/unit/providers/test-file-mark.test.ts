// The test file's mark (providers/test-file-mark.ts): its command lines run in a real sh on a temp
// directory, and what they find, write and remove checked on the file system afterwards.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claimCommand, lookCommand, markLine, markOwner, markPathOf, parseLook, parseRemove, removeCommand } from '../../../src/providers/test-file-mark.ts';

let dir: string;
let file: string;
const OWNER = 'ss-rabc123-p0123456789ab-testfile';

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-mark-'));
  file = path.join(dir, 'it has spaces.dat');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sh = (command: string) => {
  const r = spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout };
};
const look = () => parseLook(sh(lookCommand(file)).stdout, file);

describe('markOwner', () => {
  it('reads only a mark storsweep wrote for that very path', () => {
    expect(markOwner(`${markLine(OWNER, file)}\n`, file)).toBe(OWNER);
    expect(markOwner(markLine(OWNER, file), `${file}.other`)).toBeNull();
    expect(markOwner(`x${markLine(OWNER, file)}`, file)).toBeNull();
    expect(markOwner('storsweep test file not-ours /x', '/x')).toBeNull();
  });
});

describe('lookCommand', () => {
  it('nothing there; a user file; a user file with someone else\'s mark; our file', () => {
    expect(look()).toEqual({ kind: 'absent' });
    fs.writeFileSync(file, 'user data');
    expect(look()).toEqual({ kind: 'foreign', found: 'a regular file of 9 bytes with no .storsweep-mark beside it' });
    fs.writeFileSync(markPathOf(file), markLine(OWNER, '/elsewhere.dat'));
    expect(look()).toMatchObject({ kind: 'foreign', found: expect.stringContaining('is not one storsweep wrote for this path') });
    fs.writeFileSync(markPathOf(file), `${markLine(OWNER, file)}\n`);
    expect(look()).toEqual({ kind: 'ours', owner: OWNER });
  });

  it('a link (even beside our mark) or a directory is never ours, and is not followed', () => {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    fs.symlinkSync(victim, file);
    fs.writeFileSync(markPathOf(file), markLine(OWNER, file));
    expect(look()).toMatchObject({ kind: 'foreign', found: expect.stringContaining('symbolic link') });
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect(look()).toMatchObject({ kind: 'foreign', found: expect.stringContaining('not a regular file') });
  });

  it('a mark that is a link is not read', () => {
    fs.writeFileSync(file, 'user data');
    const fake = path.join(dir, 'fake');
    fs.writeFileSync(fake, markLine(OWNER, file));
    fs.symlinkSync(fake, markPathOf(file));
    expect(look().kind).toBe('foreign');
  });
});

describe('claimCommand', () => {
  it('writes the mark (making the directory), and not when a file appeared since the look', () => {
    file = path.join(dir, 'sub', 'dir', 't.dat');
    expect(sh(claimCommand(file, markLine(OWNER, file), { kind: 'absent' }))).toEqual({ code: 0, stdout: 'marked\n' });
    expect(fs.readFileSync(markPathOf(file), 'utf8')).toBe(`${markLine(OWNER, file)}\n`);
    fs.rmSync(markPathOf(file));
    fs.writeFileSync(file, 'appeared');
    expect(sh(claimCommand(file, markLine(OWNER, file), { kind: 'absent' })).code).toBe(3);
    expect(fs.existsSync(markPathOf(file))).toBe(false);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['t.dat']);
  });

  it('replaces a link at the mark\'s path instead of writing through it', () => {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    fs.symlinkSync(victim, markPathOf(file));
    expect(sh(claimCommand(file, markLine(OWNER, file), { kind: 'foreign', found: 'x' })).code).toBe(0);
    expect(fs.readFileSync(victim, 'utf8')).toBe('precious');
    expect(fs.lstatSync(markPathOf(file)).isFile()).toBe(true);
  });

  it('takes over our own file only while the mark it saw is still there', () => {
    fs.writeFileSync(file, 'old fill');
    fs.writeFileSync(markPathOf(file), `${markLine('ss-rold-p0123456789ab-testfile', file)}\n`);
    const seen = look();
    expect(seen).toEqual({ kind: 'ours', owner: 'ss-rold-p0123456789ab-testfile' });
    fs.writeFileSync(markPathOf(file), `${markLine('ss-rother-p0123456789ab-testfile', file)}\n`);
    expect(sh(claimCommand(file, markLine(OWNER, file), seen)).code).toBe(3);
    fs.writeFileSync(markPathOf(file), `${markLine('ss-rold-p0123456789ab-testfile', file)}\n`);
    expect(sh(claimCommand(file, markLine(OWNER, file), seen)).code).toBe(0);
    expect(look()).toEqual({ kind: 'ours', owner: OWNER });
  });
});

describe('removeCommand', () => {
  const remove = () => parseRemove(sh(removeCommand(file, markLine(OWNER, file))).stdout);

  it('removes the file and its mark only while the mark is this owner\'s', () => {
    fs.writeFileSync(file, 'fill');
    expect(remove()).toEqual({ kind: 'no-mark' });
    expect(fs.existsSync(file)).toBe(true);
    fs.writeFileSync(markPathOf(file), `${markLine('ss-rother-p0123456789ab-testfile', file)}\n`);
    expect(remove()).toEqual({ kind: 'other-mark', mark: markLine('ss-rother-p0123456789ab-testfile', file) });
    expect(fs.existsSync(file)).toBe(true);
    fs.writeFileSync(markPathOf(file), `${markLine(OWNER, file)}\n`);
    expect(remove()).toEqual({ kind: 'removed' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a link at the path is left with what it points to; our mark beside it goes', () => {
    const victim = path.join(dir, 'victim');
    fs.writeFileSync(victim, 'precious');
    fs.symlinkSync(victim, file);
    fs.writeFileSync(markPathOf(file), `${markLine(OWNER, file)}\n`);
    expect(remove()).toEqual({ kind: 'not-a-file' });
    expect(fs.readFileSync(file, 'utf8')).toBe('precious');
    expect(fs.existsSync(markPathOf(file))).toBe(false);
  });

  it('a mark whose file was never made goes alone', () => {
    fs.writeFileSync(markPathOf(file), `${markLine(OWNER, file)}\n`);
    expect(remove()).toEqual({ kind: 'mark-only' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
