// Secrets by reference: resolution, and a Secret that prints and serializes as its reference.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redact, redactDeep, resolveSecret, Secret } from '../../../src/config/secrets.ts';

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

  it('anything else is not a reference', () => {
    expect(resolveSecret('hunter2', dir, {})).toMatchObject({ ok: false, message: expect.stringContaining('is not a secret reference') });
    expect(resolveSecret('${vault:x}', dir, {}).ok).toBe(false);
  });
});

describe('Secret', () => {
  it('prints, serializes and inspects as its reference', () => {
    const s = new Secret('${env:X}', 'value-xyz-123');
    expect(String(s)).toBe('${env:X}');
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
