// known_hosts matching as OpenSSH does it. Hashed entries come from the real `ssh-keygen -H`, so a
// mismatch with OpenSSH's own hashing would fail here.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha256, hostKeyName, parseKnownHosts, patternsMatch, verifyHostKey } from '../../../src/ssh/known-hosts.ts';

const A = Buffer.from('host-key-A-blob');
const B = Buffer.from('host-key-B-blob');
const b64 = (k: Buffer) => k.toString('base64');

const hashed = (name: string, salt = crypto.randomBytes(20)) => `|1|${salt.toString('base64')}|${crypto.createHmac('sha1', salt).update(name).digest('base64')}`;

describe('parseKnownHosts', () => {
  it('reads markers, patterns, key type and line numbers; skips comments, blanks and short lines', () => {
    const text = ['# comment', '', 'host1,host2 ssh-ed25519 AAAA1', '@revoked * ssh-rsa AAAA2', '@cert-authority *.lab ssh-ed25519 AAAA3', 'only-two-fields ssh-ed25519', '  [h]:2222   ssh-ed25519   AAAA4  trailing comment'].join('\n');
    expect(parseKnownHosts(text)).toEqual([
      { marker: '', patterns: 'host1,host2', keyType: 'ssh-ed25519', keyBase64: 'AAAA1', line: 3 },
      { marker: '@revoked', patterns: '*', keyType: 'ssh-rsa', keyBase64: 'AAAA2', line: 4 },
      { marker: '@cert-authority', patterns: '*.lab', keyType: 'ssh-ed25519', keyBase64: 'AAAA3', line: 5 },
      { marker: '', patterns: '[h]:2222', keyType: 'ssh-ed25519', keyBase64: 'AAAA4', line: 7 },
    ]);
  });
});

describe('host names and patterns', () => {
  it('port 22 is the bare host; any other port is [host]:port', () => {
    expect(hostKeyName('esx1.lab', 22)).toBe('esx1.lab');
    expect(hostKeyName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
  });

  it('globs, comma lists, case-insensitivity; a [host]:port entry does not match port 22 and vice versa', () => {
    expect(patternsMatch('esx*.lab', 'esx12.lab')).toBe(true);
    expect(patternsMatch('esx?.lab', 'esx12.lab')).toBe(false);
    expect(patternsMatch('a.lab,ESX1.LAB', 'esx1.lab')).toBe(true);
    expect(patternsMatch('[127.0.0.1]:2222', '[127.0.0.1]:2222')).toBe(true);
    expect(patternsMatch('[127.0.0.1]:2222', '127.0.0.1')).toBe(false);
    expect(patternsMatch('127.0.0.1', '[127.0.0.1]:2222')).toBe(false);
    // a dot is literal, not "any character"
    expect(patternsMatch('10.0.0.1', '10a0b0c1')).toBe(false);
  });

  it('negation excludes the line even when another pattern matches; negation alone matches nothing', () => {
    expect(patternsMatch('*.lab,!bad.lab', 'good.lab')).toBe(true);
    expect(patternsMatch('*.lab,!bad.lab', 'bad.lab')).toBe(false);
    expect(patternsMatch('!bad.lab', 'good.lab')).toBe(false);
  });

  it('hashed patterns match the exact name they were made from (including [host]:port)', () => {
    expect(patternsMatch(hashed('esx1.lab'), 'esx1.lab')).toBe(true);
    expect(patternsMatch(hashed('esx1.lab'), 'esx2.lab')).toBe(false);
    expect(patternsMatch(hashed('[10.0.0.5]:2222'), '[10.0.0.5]:2222')).toBe(true);
    expect(patternsMatch(hashed('[10.0.0.5]:2222'), '10.0.0.5')).toBe(false);
    expect(patternsMatch('|1|broken', 'esx1.lab')).toBe(false);
  });
});

describe('verifyHostKey', () => {
  it('accepts the listed key, reports a mismatch with the expected entries, and an unknown host', () => {
    const entries = parseKnownHosts(`esx1.lab ssh-ed25519 ${b64(A)}\n[esx1.lab]:2222 ssh-ed25519 ${b64(B)}\n`);
    expect(verifyHostKey(entries, 'esx1.lab', 22, A)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'esx1.lab', 22, B)).toEqual({ ok: false, reason: 'mismatch', expected: ['ssh-ed25519 (line 1)'] });
    expect(verifyHostKey(entries, 'esx1.lab', 2222, B)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'esx1.lab', 2222, A)).toMatchObject({ ok: false, reason: 'mismatch' });
    expect(verifyHostKey(entries, 'esx2.lab', 22, A)).toEqual({ ok: false, reason: 'unknown-host' });
  });

  it('any of several keys for a host will do', () => {
    const entries = parseKnownHosts(`h ssh-rsa ${b64(B)}\nh ssh-ed25519 ${b64(A)}\n`);
    expect(verifyHostKey(entries, 'h', 22, A)).toEqual({ ok: true });
  });

  it('@revoked wins over a matching plain entry; a revoked key for another host does not matter', () => {
    const entries = parseKnownHosts(`h ssh-ed25519 ${b64(A)}\n@revoked h ssh-ed25519 ${b64(A)}\n@revoked other ssh-ed25519 ${b64(B)}\nh ssh-ed25519 ${b64(B)}\n`);
    expect(verifyHostKey(entries, 'h', 22, A)).toEqual({ ok: false, reason: 'revoked' });
    expect(verifyHostKey(entries, 'h', 22, B)).toEqual({ ok: true });
  });

  it('@revoked with a wildcard revokes the key everywhere', () => {
    const entries = parseKnownHosts(`@revoked * ssh-ed25519 ${b64(A)}\nh ssh-ed25519 ${b64(A)}\n`);
    expect(verifyHostKey(entries, 'h', 22, A)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('@cert-authority lines never vouch for a plain key', () => {
    const entries = parseKnownHosts(`@cert-authority * ssh-ed25519 ${b64(A)}\n`);
    expect(verifyHostKey(entries, 'h', 22, A)).toEqual({ ok: false, reason: 'unknown-host' });
  });

  it('a negated entry does not vouch for the negated host', () => {
    const entries = parseKnownHosts(`*.lab,!rogue.lab ssh-ed25519 ${b64(A)}\n`);
    expect(verifyHostKey(entries, 'esx.lab', 22, A)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'rogue.lab', 22, A)).toEqual({ ok: false, reason: 'unknown-host' });
  });

  it('fingerprints as OpenSSH prints them (SHA256:, unpadded base64)', () => {
    const fp = fingerprintSha256(A);
    expect(fp).toBe('SHA256:' + crypto.createHash('sha256').update(A).digest('base64').replace(/=+$/, ''));
    expect(fp).not.toMatch(/=$/);
  });
});

describe('files hashed by the real ssh-keygen -H', () => {
  let dir: string;
  let hostKey: Buffer;
  let otherKey: Buffer;
  let file: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-kh-'));
    const keygen = (name: string) => {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, name)]);
      return fs.readFileSync(path.join(dir, `${name}.pub`), 'utf8').trim().split(' ').slice(0, 2);
    };
    const [type, host] = keygen('host');
    const [, other] = keygen('other');
    hostKey = Buffer.from(host!, 'base64');
    otherKey = Buffer.from(other!, 'base64');
    file = path.join(dir, 'known_hosts');
    fs.writeFileSync(file, `[127.0.0.1]:2222 ${type} ${host}\nesx1.lab ${type} ${host}\n`);
    execFileSync('ssh-keygen', ['-H', '-f', file], { stdio: 'ignore' });
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('keeps no plaintext names, and still verifies both entries', () => {
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain('esx1.lab');
    const entries = parseKnownHosts(text);
    expect(entries.map((e) => e.patterns.startsWith('|1|'))).toEqual([true, true]);
    expect(verifyHostKey(entries, '127.0.0.1', 2222, hostKey)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'esx1.lab', 22, hostKey)).toEqual({ ok: true });
    expect(verifyHostKey(entries, '127.0.0.1', 22, hostKey)).toEqual({ ok: false, reason: 'unknown-host' });
    expect(verifyHostKey(entries, 'esx1.lab', 22, otherKey)).toMatchObject({ ok: false, reason: 'mismatch' });
  });
});
