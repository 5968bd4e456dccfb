// TLS to the PostgreSQL store. The default is libpq's `sslmode=prefer` ("first try an SSL
// connection; if that fails, try a non-SSL connection": https://www.postgresql.org/docs/current/libpq-ssl.html),
// which node-postgres does not have: its `ssl` is on or off, and on, a server that answers the
// SSLRequest with 'N' fails the connection with "The server does not support SSL connections"
// (pg/lib/connection.js; brianc/node-postgres#2720, where the maintainers decline a fallback). So we
// try once with TLS and fall back to plain text only on that answer — never on a certificate or
// handshake error, which is an error — and every session of the command (the pool, the lease
// session, the queue) then uses what was settled. Like libpq's prefer, the server's certificate is
// not verified (`sslmode=verify-full` does that): prefer keeps passive listeners out, not an
// attacker in the middle, who can also answer 'N'; so a connection to another machine that ends up
// in plain text is warned about (app/store.ts plaintextWarning).
import pg from 'pg';
import type { PgConnection } from './pg-store.ts';

/** node-postgres' error when the server answers the SSLRequest with 'N' (pg/lib/connection.js). */
export const PG_SSL_REFUSED = 'The server does not support SSL connections';

/** The server said it has no SSL (and nothing else went wrong): the one case prefer falls back on. */
export function isSslRefused(err: unknown): boolean {
  return err instanceof Error && err.message === PG_SSL_REFUSED;
}

/** prefer's TLS: encrypted, the certificate not verified (libpq's prefer and require). */
export const UNVERIFIED_TLS = { rejectUnauthorized: false } as const;

/**
 * `conn` (no `ssl` of its own) with TLS when the server offers it, else plain text: one connection
 * with TLS is tried (and closed); only the server's "no SSL" answer makes it plain. Any other error
 * is thrown, as the connection that follows would fail with it too.
 */
export async function preferTls(conn: Omit<PgConnection, 'ssl'>): Promise<{ connection: PgConnection; encrypted: boolean }> {
  const { queryTimeoutMs: _ignored, ...target } = conn;
  const client = new pg.Client({ ...target, ssl: { ...UNVERIFIED_TLS }, application_name: 'storsweep', connectionTimeoutMillis: 15_000 });
  // an error after connect (the server going away while we close) must not crash the process
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    if (isSslRefused(err)) return { connection: { ...conn, ssl: false }, encrypted: false };
    throw err;
  }
  await client.end().catch(() => undefined);
  return { connection: { ...conn, ssl: { ...UNVERIFIED_TLS } }, encrypted: true };
}
