// TLS trust for one vSphere endpoint: system CAs (default), a CA bundle, a pinned SHA-256
// thumbprint, or — only when written — no verification.
//
// Pinning: `checkServerIdentity` is never consulted when chain validation fails, and with
// rejectUnauthorized:false a wrong pin still lets the request (and the Login body) through. So we
// first open a bare TLS connection that sends nothing, read the peer certificate and compare its
// SHA-256 fingerprint; only on a match do we build the agent, trusting exactly that certificate
// (as `ca`) and re-checking the fingerprint on every connection.
import { Agent } from 'node:https';
import { isIP } from 'node:net';
import { connect, type PeerCertificate, type DetailedPeerCertificate } from 'node:tls';
import { HostVerificationFailed } from '../../errors.ts';
import { readInputFile } from '../../input/read-input.ts';

export interface TlsOptions {
  /** SHA-256 fingerprint, colon hex (case and colons are ignored) */
  thumbprint?: string;
  /** PEM file with the CA(s) to trust instead of the system store (e.g. the VMCA root) */
  caFile?: string;
  insecure?: boolean;
  /** sockets kept per host (keep-alive pool) */
  maxSockets?: number;
  timeoutMs?: number;
}

export function normalizeThumbprint(t: string): string {
  const hex = t.replace(/[:\s]/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) {
    throw new HostVerificationFailed(
      `thumbprint "${t}" is not a SHA-256 fingerprint (64 hex digits, colons optional); SHA-1 thumbprints are not accepted for pinning`,
      '',
    );
  }
  return hex.match(/../g)!.join(':');
}

function toPem(raw: Buffer): string {
  const b64 = raw.toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

function endpoint(url: string): { host: string; port: number; servername: string | undefined } {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return { host, port: u.port ? Number(u.port) : 443, servername: isIP(host) ? undefined : host };
}

/** Read the server's certificate chain without sending any application data. */
export async function fetchPeerCertificate(url: string, timeoutMs = 15_000): Promise<DetailedPeerCertificate> {
  const { host, port, servername } = endpoint(url);
  return new Promise((resolve, reject) => {
    const sock = connect({ host, port, servername, rejectUnauthorized: false, timeout: timeoutMs });
    sock.once('secureConnect', () => {
      const cert = sock.getPeerCertificate(true);
      sock.destroy();
      if (!cert || !cert.raw) reject(new HostVerificationFailed(`${host}:${port} presented no certificate`, `${host}:${port}`));
      else resolve(cert);
    });
    sock.once('timeout', () => {
      sock.destroy();
      reject(new HostVerificationFailed(`TLS handshake with ${host}:${port} timed out after ${timeoutMs} ms`, `${host}:${port}`));
    });
    sock.once('error', (err: Error) => reject(new HostVerificationFailed(`TLS connection to ${host}:${port} failed: ${err.message}`, `${host}:${port}`, { cause: err })));
  });
}

function chainPems(cert: DetailedPeerCertificate): string[] {
  const pems: string[] = [];
  const seen = new Set<string>();
  let c: DetailedPeerCertificate | undefined = cert;
  while (c && c.raw && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    pems.push(toPem(c.raw));
    c = c.issuerCertificate;
  }
  return pems;
}

/** Build the https.Agent for `url`; with a thumbprint, refuses (throws) before any request is made. */
export async function createHttpsAgent(url: string, opts: TlsOptions): Promise<Agent> {
  const base = { keepAlive: true, maxSockets: opts.maxSockets ?? 4 };
  const { host, port } = endpoint(url);
  const where = `${host}:${port}`;
  if (opts.insecure) {
    if (opts.thumbprint || opts.caFile) {
      throw new HostVerificationFailed(`${where}: insecure: true conflicts with thumbprint/caFile; choose one`, where);
    }
    return new Agent({ ...base, rejectUnauthorized: false });
  }
  if (opts.thumbprint) {
    const want = normalizeThumbprint(opts.thumbprint);
    const cert = await fetchPeerCertificate(url, opts.timeoutMs);
    if (cert.fingerprint256.toUpperCase() !== want) {
      throw new HostVerificationFailed(
        `TLS certificate of ${where} does not match the pinned thumbprint: expected ${want}, server presented ${cert.fingerprint256}; nothing was sent`,
        where,
      );
    }
    return new Agent({
      ...base,
      // The presented chain is trusted as-is (self-signed ESXi/vCenter certs are their own root);
      // the pin, not the hostname, identifies the server.
      ca: chainPems(cert),
      checkServerIdentity: (_host: string, peer: PeerCertificate) => {
        if (peer.fingerprint256.toUpperCase() === want) return undefined;
        const err = new Error(`certificate fingerprint ${peer.fingerprint256} does not match pinned ${want}`) as Error & { code: string };
        err.code = 'ERR_TLS_THUMBPRINT_MISMATCH';
        return err;
      },
    });
  }
  if (opts.caFile) {
    let ca: Buffer;
    try {
      ca = readInputFile(opts.caFile, 'config');
    } catch (err) {
      throw new HostVerificationFailed(`${where}: cannot read caFile ${opts.caFile}: ${(err as Error).message}`, where, { cause: err });
    }
    return new Agent({ ...base, ca });
  }
  return new Agent(base);
}
