// A store connection to another machine that ends up in plain text is warned about, once per store
// and process; one on this machine (loopback) or encrypted is not. prefer falls back to plain text
// only on the server's "no SSL" answer, never on a certificate error.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pgConnectionOf, plaintextWarning } from '../../../src/app/store.ts';
import { resolveStore } from '../../../src/config/store.ts';
import { isSslRefused, PG_SSL_REFUSED } from '../../../src/results/pg-tls.ts';

const W = 'postgresql://u@db.lab:5432/runs';

describe('plaintextWarning', () => {
  it('another machine in plain text: warned, saying why and what to set', () => {
    expect(plaintextWarning(W, 'db.lab', { encrypted: false, sslmode: 'prefer' })).toBe(
      `${W}: the connection is not encrypted (the server offers no TLS): plans, ledger and results cross the network in clear; turn on ssl in the server and add ?sslmode=verify-full to the store URL`,
    );
    expect(plaintextWarning(W, '10.0.0.5', { encrypted: false, sslmode: 'disable' })).toContain('not encrypted (sslmode=disable)');
    expect(plaintextWarning(W, '2001:db8::7', { encrypted: false, sslmode: 'prefer' })).not.toBeNull();
    // a name that only looks local is another machine: names are not resolved
    expect(plaintextWarning(W, 'localhost.example.com', { encrypted: false, sslmode: 'prefer' })).not.toBeNull();
  });

  it('encrypted, or this machine (127.0.0.0/8, ::1, localhost): no warning', () => {
    expect(plaintextWarning(W, 'db.lab', { encrypted: true, sslmode: 'prefer' })).toBeNull();
    for (const h of ['127.0.0.1', '127.8.9.10', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', 'db.localhost']) {
      expect(plaintextWarning(W, h, { encrypted: false, sslmode: 'disable' }), h).toBeNull();
    }
  });
});

describe('the warning on stderr', () => {
  afterEach(() => vi.restoreAllMocks());

  it('sslmode=disable to db.lab: one warning for two connections of one process (no server needed: disable sends nothing first)', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const r = resolveStore('postgresql://u@db.lab:5432/runs?sslmode=disable', process.cwd(), process.env);
    if (!r.ok) throw new Error(r.error);
    expect((await pgConnectionOf(r.store)).ssl).toBe(false);
    expect((await pgConnectionOf(r.store)).ssl).toBe(false);
    expect(written).toEqual([`warning: ${W}: the connection is not encrypted (sslmode=disable): plans, ledger and results cross the network in clear; turn on ssl in the server and add ?sslmode=verify-full to the store URL\n`]);
  });

  it('require and verify-full to db.lab: encrypted, nothing said', async () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    for (const mode of ['require', 'verify-full']) {
      const r = resolveStore(`postgresql://u@db.lab:5432/runs?sslmode=${mode}`, process.cwd(), process.env);
      if (!r.ok) throw new Error(r.error);
      expect((await pgConnectionOf(r.store)).ssl).toEqual(mode === 'require' ? { rejectUnauthorized: false } : true);
    }
    expect(written).toEqual([]);
  });
});

describe('what prefer falls back on', () => {
  it("only node-postgres' error for the server's 'N' answer; a certificate or handshake error is not it", () => {
    expect(isSslRefused(new Error(PG_SSL_REFUSED))).toBe(true);
    const cert = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(isSslRefused(cert)).toBe(false);
    expect(isSslRefused(new Error('There was an error establishing an SSL connection'))).toBe(false);
    expect(isSslRefused(PG_SSL_REFUSED)).toBe(false);
  });
});
