// The store URL (config/store.ts), the one parser behind `--store` (every command, submit and worker
// too) and the inventory's `store:`: its forms, the password only by reference (a literal one is
// refused and never repeated), and a bad `store:` refused at its line with the allowed forms.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/config/index.ts';
import { parseStoreUrl, resolveStore, STORE_URL_FORM } from '../../../src/config/store.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-store-url-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('parseStoreUrl', () => {
  it('reads user, host, port, database and sslmode; `display` never has a password part', () => {
    const r = parseStoreUrl('postgresql://ss:${env:PW}@db.example:6543/runs?sslmode=require');
    expect(r).toEqual({ ok: true, url: { kind: 'postgresql', display: 'postgresql://ss@db.example:6543/runs', host: 'db.example', port: 6543, user: 'ss', database: 'runs', passwordRef: '${env:PW}', sslmode: 'require' } });
    const v6 = parseStoreUrl('postgres://ss@[::1]/runs');
    expect(v6).toMatchObject({ ok: true, url: { host: '::1', port: 5432, sslmode: 'prefer', display: 'postgresql://ss@[::1]:5432/runs' } });
  });

  it('refuses a literal password without repeating it', () => {
    const r = parseStoreUrl('postgresql://ss:hunter22@h/db');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(/must be a secret reference/);
    expect(r.error).not.toContain('hunter22');
    const garbled = parseStoreUrl('postgresql://ss:hunter22@h:99999999/db');
    expect(garbled.ok).toBe(false);
    if (!garbled.ok) expect(garbled.error).not.toContain('hunter22');
  });

  it('refuses what is not a PostgreSQL URL, a bad port, unknown parameters and sslmodes, naming what is allowed', () => {
    const err = (t: string) => {
      const r = parseStoreUrl(t);
      return r.ok ? '' : r.error;
    };
    expect(err('mysql://h/db')).toBe(`"mysql://h/db" is not a store URL; expected ${STORE_URL_FORM}`);
    // what stands before '@' may be a password: not repeated
    expect(err('mysql://u:Plain-Pass-9@h/db')).toBe(`"mysql://…@h/db" is not a store URL; expected ${STORE_URL_FORM}`);
    expect(err('postgresql://u@h:0/db')).toBe('store URL port 0: expected 1–65535');
    expect(err('postgresql://u@h/db?application_name=x')).toBe('store URL parameter "application_name": only sslmode is understood (disable, prefer, require, verify-full)');
    expect(err('postgresql://u@h/db?sslmode=maybe')).toBe('store URL sslmode="maybe": expected one of disable, prefer, require, verify-full');
  });
});

describe('resolveStore', () => {
  it('resolves the password reference (a relative ${file:…} against the base directory)', () => {
    fs.writeFileSync(path.join(dir, 'pw'), 'sekret-pass-1\n');
    const r = resolveStore('postgresql://ss:${file:pw}@h/db', dir, {});
    expect(r.ok && r.store.password?.reveal()).toBe('sekret-pass-1');
    const missing = resolveStore('postgresql://ss:${env:NO_SUCH_PW}@h/db', dir, {});
    expect(missing).toEqual({ ok: false, error: expect.stringMatching(/^postgresql:\/\/ss@h:5432\/db: .*NO_SUCH_PW is not set/) });
  });
});

describe("the inventory's store:", () => {
  const diagnostics = (store: string): string[] => {
    const file = path.join(dir, `inv-${Math.random().toString(36).slice(2)}.yaml`);
    fs.writeFileSync(file, `targets:\n  here:\n    provider: local\n    workdir: /tmp/x\nstore: ${store}\n`);
    try {
      loadInventory(file, {});
    } catch (e) {
      if (e instanceof ConfigError) return e.diagnostics.map(formatDiagnostic).map((d) => d.replace(file, 'INV'));
      throw e;
    }
    return [];
  };

  it('is refused at its line and column with the allowed form, once; a literal password is never repeated', () => {
    expect(diagnostics('"mysql://u@h/db"')).toEqual([`INV:5:8: store: "mysql://…@h/db" is not a store URL; expected ${STORE_URL_FORM}`]);
    const literal = diagnostics('postgresql://u:Plain-Pass-9@h/db');
    expect(literal).toHaveLength(1);
    expect(literal[0]).toMatch(/^INV:5:8: store: .*must be a secret reference/);
    expect(literal.join('\n')).not.toContain('Plain-Pass-9');
    expect(diagnostics('postgresql://u:${env:NO_SUCH_PW}@h/db')).toEqual(['INV:5:8: store: postgresql://u@h:5432/db: secret ${env:NO_SUCH_PW}: environment variable NO_SUCH_PW is not set']);
    expect(diagnostics('postgresql://u@h/db')).toEqual([]);
  });

  it('a password by ${env:…} reference is the documented form: accepted and resolved (not taken for a password in a URL)', () => {
    const file = path.join(dir, 'inv-env.yaml');
    fs.writeFileSync(file, 'targets:\n  here:\n    provider: local\n    workdir: /tmp/x\nstore: postgresql://ss:${env:SS_STORE_PW}@db.example/runs\n');
    const inv = loadInventory(file, { SS_STORE_PW: 'Store-Secret-7' });
    expect(inv.store?.display).toBe('postgresql://ss@db.example:5432/runs');
    expect(inv.store?.password?.reveal()).toBe('Store-Secret-7');
  });

  it('a store URL holding the value of another secret of the inventory is refused, the value not repeated', () => {
    const file = path.join(dir, 'inv-leak.yaml');
    fs.writeFileSync(file, 'sshHosts:\n  g:\n    host: 127.0.0.1\n    user: u\n    password: ${env:SS_SSH_PW}\n    insecure: true\ntargets:\n  here:\n    provider: local\n    workdir: /tmp/x\nstore: postgresql://Leaked-Pw-3@db.example/runs\n');
    let d: string[] = [];
    try {
      loadInventory(file, { SS_SSH_PW: 'Leaked-Pw-3' });
    } catch (e) {
      if (e instanceof ConfigError) d = e.diagnostics.map(formatDiagnostic);
    }
    expect(d).toEqual([`${file}:11:8: store: contains the value of the secret sshHosts.g.password (\${env:SS_SSH_PW}); a secret may appear only in a secret field (password, passphrase), never in a name, path or URL, which plans, ledgers and reports keep as written`]);
  });
});
