// The transient failure of anything run over our own transports (SSH to an ESXi shell, a Windows
// host, a guest): the connection was lost. The command may or may not have run; whoever retries
// looks first (the executor finds a created object before reissuing its create). Anything else —
// a command that exited non-zero, a timeout, a full disk — is not retried.
import { RemoteCommandFailed } from '../errors.ts';

const SOCKET_CODES = new Set(['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNREFUSED']);

export function connectionLost(err: unknown): boolean {
  if (err instanceof RemoteCommandFailed) return err.details.reason === 'connection';
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
  }
  return false;
}
