// A fake PostgreSQL server that asks every client for a cleartext password
// (AuthenticationCleartextPassword: 'R', length 8, code 3 — PostgreSQL protocol, "Message Formats")
// and records what it receives: the startup parameters (user, database) and any password message.
// For tests that prove a secret is NOT sent somewhere.
import net from 'node:net';

export interface FakePg {
  port: number;
  /** one entry per connection: its startup parameters and the password it sent, if any */
  seen: Array<{ params: Record<string, string>; password?: string }>;
  close(): Promise<void>;
}

export async function startFakePg(): Promise<FakePg> {
  const seen: FakePg['seen'] = [];
  const server = net.createServer((s) => {
    let buf = Buffer.alloc(0);
    let entry: FakePg['seen'][number] | null = null;
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (!entry && buf.length >= 8) {
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        const code = buf.readInt32BE(4);
        if (code === 80877103) {
          // SSLRequest: no TLS here
          s.write('N');
          buf = buf.subarray(len);
          return;
        }
        const words = buf.subarray(8, len).toString('utf8').split('\0');
        const params: Record<string, string> = {};
        for (let i = 0; i + 1 < words.length; i += 2) if (words[i]) params[words[i]!] = words[i + 1]!;
        entry = { params };
        seen.push(entry);
        buf = buf.subarray(len);
        const r = Buffer.alloc(9);
        r.write('R', 0);
        r.writeInt32BE(8, 1);
        r.writeInt32BE(3, 5);
        s.write(r);
      }
      if (entry && buf.length >= 5) {
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) return;
        if (buf.subarray(0, 1).toString() === 'p') entry.password = buf.subarray(5, len).toString('utf8').replace(/\0$/, '');
        s.destroy();
      }
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
