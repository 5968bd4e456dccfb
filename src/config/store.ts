// Where runs are stored: the run directory's SQLite file (the default, nothing to configure), or a
// PostgreSQL database shared by a team, named by a URL on the command line (`--store`) or in the
// inventory (`store:`):
//
//   postgresql://USER[:${env:NAME}|:${file:path}]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full]
//
// sslmode as libpq's (https://www.postgresql.org/docs/current/libpq-ssl.html), default prefer: TLS
// when the server offers it (results/pg-tls.ts); verify-full also checks the server's certificate
// and name (a private CA: NODE_EXTRA_CA_CERTS).
//
// The password, like every secret, only by reference (input/secrets.ts); a literal password is
// refused without being repeated. What messages, logs and the run show is `display`: the URL
// without any password part.
import { z } from 'zod';
import { resolveSecret, SECRET_REF, type Secret } from '../input/secrets.ts';

export type SslMode = 'disable' | 'prefer' | 'require' | 'verify-full';

export interface StoreUrl {
  kind: 'postgresql';
  /** `postgresql://user@host:port/db`: for messages, never a password */
  display: string;
  host: string;
  port: number;
  user: string;
  database: string;
  /** the password's reference (`${env:NAME}`, `${file:path}`), if any */
  passwordRef?: string;
  sslmode: SslMode;
}

export interface ResolvedStore extends StoreUrl {
  password?: Secret;
}

export const STORE_URL_FORM = 'postgresql://USER[:${env:NAME}|${file:path}]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full]';
/** libpq's default, and ours */
export const DEFAULT_SSLMODE: SslMode = 'prefer';

const URL_RE = /^(postgres(?:ql)?):\/\/([^:@/?#\s]+)(?::([^@]*))?@(\[[0-9a-fA-F:.]+\]|[^:/?#@\s[\]]+)(?::(\d{1,5}))?\/([^/?#\s]+)(?:\?([^#\s]*))?$/;
const SSLMODES: readonly SslMode[] = ['disable', 'prefer', 'require', 'verify-full'];

/** Parses a store URL; `error` never repeats a literal password. */
export function parseStoreUrl(text: string): { ok: true; url: StoreUrl } | { ok: false; error: string } {
  const m = URL_RE.exec(text);
  if (!m) {
    // the part before '@' may hold a password: show only the scheme and what follows the last '@'
    const at = text.lastIndexOf('@');
    const shown = at >= 0 ? `${text.slice(0, text.indexOf('//') + 2)}…${text.slice(at)}` : text;
    return { ok: false, error: `${JSON.stringify(shown)} is not a store URL; expected ${STORE_URL_FORM}` };
  }
  const [, , user, password, host, port, database, query] = m as unknown as [string, string, string, string | undefined, string, string | undefined, string, string | undefined];
  if (password !== undefined && !SECRET_REF.test(password)) {
    return { ok: false, error: `postgresql://${user}:***@${host}${port ? `:${port}` : ''}/${database}: the password in a store URL must be a secret reference (\${env:NAME} or \${file:path}); plaintext secrets are not accepted` };
  }
  const portNo = port === undefined ? 5432 : Number(port);
  if (!(portNo >= 1 && portNo <= 65535)) return { ok: false, error: `store URL port ${port}: expected 1–65535` };
  let sslmode: SslMode = DEFAULT_SSLMODE;
  for (const kv of (query ?? '').split('&').filter(Boolean)) {
    const [k, v = ''] = kv.split('=');
    if (k !== 'sslmode') return { ok: false, error: `store URL parameter ${JSON.stringify(k)}: only sslmode is understood (${SSLMODES.join(', ')})` };
    if (!SSLMODES.includes(v as SslMode)) return { ok: false, error: `store URL sslmode=${JSON.stringify(v)}: expected one of ${SSLMODES.join(', ')}` };
    sslmode = v as SslMode;
  }
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return {
    ok: true,
    url: { kind: 'postgresql', display: `postgresql://${decodeURIComponent(user)}@${host}:${portNo}/${decodeURIComponent(database)}`, host: bare, port: portNo, user: decodeURIComponent(user), database: decodeURIComponent(database), ...(password !== undefined ? { passwordRef: password } : {}), sslmode },
  };
}

/** The inventory's `store:` field: checked by the same parser (a literal password is refused at its line). */
export const storeUrlSchema = z
  .string()
  .superRefine((v, ctx) => {
    const r = parseStoreUrl(v);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.error });
  })
  .describe(`Where runs are stored (default: each run directory's run.sqlite): ${STORE_URL_FORM}`);

/** Parses and resolves the password reference (relative `${file:…}` against `baseDir`). */
export function resolveStore(text: string, baseDir: string, env: NodeJS.ProcessEnv): { ok: true; store: ResolvedStore } | { ok: false; error: string } {
  const p = parseStoreUrl(text);
  if (!p.ok) return p;
  if (p.url.passwordRef === undefined) return { ok: true, store: p.url };
  const s = resolveSecret(p.url.passwordRef, baseDir, env);
  if (!s.ok) return { ok: false, error: `${p.url.display}: ${s.message}` };
  return { ok: true, store: { ...p.url, password: s.secret } };
}
