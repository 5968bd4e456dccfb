// `--store postgresql://user:${file:pw}@host:port/db[?sslmode=…]`: the store's URL, its password by
// reference like every secret (`${env:NAME}` or `${file:path}`, resolved here, in the composition
// root, and never printed). A literal password in the URL is refused: it would land in shell history
// and process listings.
import { resolveSecret, SECRET_REF } from '../config/secrets.ts';
import { UsageError } from '../errors.ts';
import type { PgConnection } from '../results/pg-store.ts';
import { visible } from '../text/visible.ts';

export interface StoreTarget {
  connection: PgConnection;
  /** for messages: postgresql://user@host:port/db (never a password) */
  where: string;
}

const URL_RE = /^postgres(?:ql)?:\/\/(?:([^:@/?#]+)(?::(\$\{[^}]*\}|[^@/?#]*))?@)?([^:/?#@]+|\[[^\]]+\])(?::(\d{1,5}))?\/([^/?#]+)(?:\?([^#]*))?$/;

export function parseStoreUrl(url: string, baseDir = process.cwd(), env: NodeJS.ProcessEnv = process.env): StoreTarget {
  const m = URL_RE.exec(url);
  const shape = 'expected postgresql://USER:${env:NAME}@HOST[:PORT]/DATABASE (the password by reference: ${env:NAME} or ${file:path})';
  if (!m) throw new UsageError(`--store: not a PostgreSQL URL: ${visible(url.replace(/:[^:@/]*@/, ':***@'))}; ${shape}`);
  const [, userPart, passwordPart, host, portText, database, query] = m;
  const user = decodeURIComponent(userPart ?? process.env.PGUSER ?? 'postgres');
  const port = portText ? Number(portText) : 5432;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--store: port ${portText} is out of range 1-65535`);
  const where = `postgresql://${user}@${host}:${port}/${database}`;
  let password: string | undefined;
  if (passwordPart !== undefined && passwordPart !== '') {
    if (!SECRET_REF.test(passwordPart)) throw new UsageError(`--store ${visible(where)}: the password must be a reference, not the password itself; ${shape}`);
    const r = resolveSecret(passwordPart, baseDir, env);
    if (!r.ok) throw new UsageError(`--store ${visible(where)}: ${r.message}`);
    password = r.secret.reveal();
  }
  const params = new URLSearchParams(query ?? '');
  const sslmode = params.get('sslmode');
  let ssl: PgConnection['ssl'];
  if (sslmode === null || sslmode === 'disable' || sslmode === 'prefer' || sslmode === 'allow') ssl = undefined;
  else if (sslmode === 'require') ssl = { rejectUnauthorized: false };
  else if (sslmode === 'verify-ca' || sslmode === 'verify-full') ssl = true;
  else throw new UsageError(`--store ${visible(where)}: sslmode ${visible(sslmode)} is not one of disable, prefer, require, verify-ca, verify-full`);
  for (const k of params.keys()) if (k !== 'sslmode') throw new UsageError(`--store ${visible(where)}: unknown parameter ${visible(k)} (only sslmode)`);
  return { connection: { host: host!.replace(/^\[|\]$/g, ''), port, user, database: decodeURIComponent(database!), ...(password !== undefined ? { password } : {}), ...(ssl !== undefined ? { ssl } : {}) }, where };
}
