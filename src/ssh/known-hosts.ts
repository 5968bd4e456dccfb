// known_hosts matching for ssh2's hostVerifier. ssh2 accepts every host key when no verifier is
// given, so the runner always installs this one unless the inventory says `insecure: true`.
// Supports plain and hashed (`|1|salt|hmac`) host patterns, `[host]:port`, comma lists, `*`/`?`
// globs, negation and `@revoked`. `@cert-authority` lines are ignored: ssh2 never offers
// host-certificate algorithms, so they could not match anyway.
import crypto from 'node:crypto';

export interface KnownHostEntry {
  marker: '' | '@revoked' | '@cert-authority';
  patterns: string;
  keyType: string;
  keyBase64: string;
  line: number;
}

export function parseKnownHosts(text: string): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const parts = line.split(/\s+/);
    let marker: KnownHostEntry['marker'] = '';
    if (parts[0] === '@revoked' || parts[0] === '@cert-authority') marker = parts.shift() as KnownHostEntry['marker'];
    const [patterns, keyType, keyBase64] = parts;
    if (!patterns || !keyType || !keyBase64) return;
    out.push({ marker, patterns, keyType, keyBase64, line: i + 1 });
  });
  return out;
}

/** The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise. */
export function hostKeyName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globToRegExp(glob: string): RegExp {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${re}$`, 'i');
}

function matchesOne(pattern: string, name: string): boolean {
  if (pattern.startsWith('|1|')) {
    const [, , salt, hash] = pattern.split('|');
    if (!salt || !hash) return false;
    const mac = crypto.createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  return globToRegExp(pattern).test(name);
}

/** OpenSSH semantics: any negated match excludes the line; otherwise any positive match matches. */
export function patternsMatch(patterns: string, name: string): boolean {
  let positive = false;
  for (const p of patterns.split(',')) {
    if (p.startsWith('!')) {
      if (matchesOne(p.slice(1), name)) return false;
    } else if (matchesOne(p, name)) {
      positive = true;
    }
  }
  return positive;
}

export type HostKeyVerdict =
  | { ok: true }
  | { ok: false; reason: 'unknown-host' | 'mismatch' | 'revoked'; expected?: string[] };

/** Decide on a presented key (`type` like `ssh-ed25519`, raw key blob) for `host:port`. */
export function verifyHostKey(entries: KnownHostEntry[], host: string, port: number, key: Buffer): HostKeyVerdict {
  const name = hostKeyName(host, port);
  const presented = key.toString('base64');
  const relevant = entries.filter((e) => e.marker !== '@cert-authority' && patternsMatch(e.patterns, name));
  if (relevant.some((e) => e.marker === '@revoked' && e.keyBase64 === presented)) return { ok: false, reason: 'revoked' };
  const known = relevant.filter((e) => e.marker === '');
  if (known.length === 0) return { ok: false, reason: 'unknown-host' };
  if (known.some((e) => e.keyBase64 === presented)) return { ok: true };
  return { ok: false, reason: 'mismatch', expected: known.map((e) => `${e.keyType} (line ${e.line})`) };
}

export function fingerprintSha256(key: Buffer): string {
  return 'SHA256:' + crypto.createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}
