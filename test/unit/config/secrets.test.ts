// Secrets by reference: resolution, and a Secret that prints and serializes as its reference.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_SECRET_LENGTH, redact, redactDeep, registerSecretValue, resolveSecret, Secret } from '../../../src/input/secrets.ts';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-secrets-'));
  fs.writeFileSync(path.join(dir, 'pw'), 'from-a-file-91\n');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('resolveSecret', () => {
  it('${env:NAME} reads the environment; unset or empty is an error naming the variable', () => {
    const ok = resolveSecret('${env:PW}', dir, { PW: 'from-env-37' });
    expect(ok.ok && ok.secret.reveal()).toBe('from-env-37');
    expect(resolveSecret('${env:PW}', dir, {})).toEqual({ ok: false, message: 'secret ${env:PW}: environment variable PW is not set' });
    expect(resolveSecret('${env:PW}', dir, { PW: '' })).toEqual({ ok: false, message: 'secret ${env:PW}: environment variable PW is not set' });
  });

  it('${file:path} reads relative to the inventory directory and drops one trailing newline', () => {
    const ok = resolveSecret('${file:pw}', dir, {});
    expect(ok.ok && ok.secret.reveal()).toBe('from-a-file-91');
    expect(resolveSecret('${file:nope}', dir, {})).toEqual({ ok: false, message: `secret \${file:nope}: cannot read ${path.join(dir, 'nope')} (ENOENT)` });
  });

  it(`a value shorter than ${MIN_SECRET_LENGTH} characters is refused, without telling its length or content`, () => {
    const r = resolveSecret('${env:PW}', dir, { PW: 'hunt3r' });
    expect(r).toEqual({ ok: false, message: expect.stringContaining('secret ${env:PW}: the value is shorter than 7 characters') });
    expect(JSON.stringify(r)).not.toMatch(/hunt3r|\b6\b/);
    // 7 characters: what ESXi's and Windows' default password policies accept
    expect(resolveSecret('${env:PW}', dir, { PW: 'hunter2' }).ok).toBe(true);
  });

  it('anything else is not a reference', () => {
    expect(resolveSecret('hunter2', dir, {})).toMatchObject({ ok: false, message: expect.stringContaining('is not a secret reference') });
    expect(resolveSecret('${vault:x}', dir, {}).ok).toBe(false);
  });
});

describe('Secret', () => {
  it('prints, serializes and inspects as its reference', () => {
    const s = new Secret('${env:X}', 'value-xyz-123');
    expect(String(s)).toBe('${env:X}');
    // eslint-disable-next-line @typescript-eslint/restrict-template-expressions -- interpolating a Secret is what is tested
    expect(`${s}`).toBe('${env:X}');
    expect(JSON.stringify({ s })).toBe('{"s":"${env:X}"}');
    expect(util.inspect({ s })).not.toContain('value-xyz-123');
  });

  it('revealed values are scrubbed from persisted text', () => {
    new Secret('${env:Y}', 'tok-55aa');
    expect(redact('ssh: auth failed for tok-55aa (tok-55aa)')).toBe('ssh: auth failed for *** (***)');
    expect(redactDeep({ a: ['x tok-55aa'], b: new Secret('${env:Z}', 'zz-999'), n: 3 })).toEqual({ a: ['x ***'], b: '${env:Z}', n: 3 });
  });
});

describe('redact (messages only)', () => {
  it('masks whole tokens, never a fragment of a longer word', () => {
    registerSecretValue('read');
    registerSecretValue('#Pw-99!');
    expect(redact('fio randread failed: rw=read, bs=4k; thread read-ahead')).toBe('fio randread failed: rw=***, bs=4k; thread ***-ahead');
    expect(redact('"readonly" reader already')).toBe('"readonly" reader already');
    // a secret that starts or ends with punctuation is masked wherever it occurs
    expect(redact('login a#Pw-99!z failed')).toBe('login a***z failed');
  });

  it('the mask is the same whatever the secret: it tells neither length nor characters', () => {
    registerSecretValue('a-much-longer-secret-value-42');
    registerSecretValue('sh0rt-s3cret');
    expect(redact('x a-much-longer-secret-value-42 y sh0rt-s3cret z')).toBe('x *** y *** z');
  });

  it('a secret inside a longer secret: the longer one is masked first, then the shorter', () => {
    registerSecretValue('outer-inner-secret');
    registerSecretValue('inner-sec');
    expect(redact('outer-inner-secret and inner-sec')).toBe('*** and ***');
  });
});
