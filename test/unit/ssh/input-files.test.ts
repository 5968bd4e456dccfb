// Files named in an inventory (SSH private key, known_hosts, vCenter caFile) are read through the
// one bounded reader: a FIFO or a device is refused at once, named, never opened for a blocking read
// (a plain readFileSync of a FIFO waits for a writer forever).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostVerificationFailed } from '../../../src/errors.ts';
import { createHttpsAgent } from '../../../src/providers/vsphere/tls.ts';
import { connectSsh } from '../../../src/ssh/ssh-runner.ts';

let dir: string;
let fifo: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-input-files-'));
  fifo = path.join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const refusal = (file: string, type: string) => expect.objectContaining({ name: 'HostVerificationFailed', message: expect.stringContaining(`${file}: it is ${type}, not a regular file`) as unknown });

describe('inventory files that are not regular files', () => {
  it('an SSH private key or known_hosts that is a FIFO or /dev/zero', async () => {
    const base = { host: '127.0.0.1', port: 9, username: 'u', readyTimeoutMs: 1000 };
    await expect(connectSsh({ ...base, privateKeyPath: fifo, insecure: true })).rejects.toEqual(refusal(fifo, 'a FIFO (named pipe)'));
    await expect(connectSsh({ ...base, privateKeyPath: '/dev/zero', insecure: true })).rejects.toEqual(refusal('/dev/zero', 'a character device'));
    await expect(connectSsh({ ...base, password: 'x', knownHostsFile: fifo })).rejects.toEqual(refusal(fifo, 'a FIFO (named pipe)'));
    await expect(connectSsh({ ...base, password: 'x', knownHostsFile: '/dev/zero' })).rejects.toBeInstanceOf(HostVerificationFailed);
  });

  it('a vCenter caFile that is a FIFO', async () => {
    await expect(createHttpsAgent('https://127.0.0.1:9/sdk', { caFile: fifo })).rejects.toEqual(refusal(fifo, 'a FIFO (named pipe)'));
  });
});
