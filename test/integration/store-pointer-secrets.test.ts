// A run directory's store.json names a store; it must never choose which secret goes to which host
// (review 17, finding 3). A fake PostgreSQL server (helpers/fake-pg.ts) asks every client for a
// cleartext password and records what it gets: a run directory from elsewhere naming it, with
// ${env:…} / ${file:…} references or none, gets no password; the store the user gives now does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, stackTraceLines } from '../helpers/cli.ts';
import { startFakePg, type FakePg } from '../helpers/fake-pg.ts';

let fake: FakePg;
let dir: string;
const SECRET = 'aws-secret-value-0123456789';
const FILE_SECRET = 'file-secret-value-9876543210';

/** A run directory as someone else may hand it over: store.json (old or new form) and nothing else. */
function runDirWith(name: string, pointer: Record<string, string>): string {
  const d = path.join(dir, name);
  fs.mkdirSync(d);
  fs.writeFileSync(path.join(d, 'store.json'), JSON.stringify(pointer));
  return d;
}

beforeAll(async () => {
  fake = await startFakePg();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-pointer-'));
  fs.writeFileSync(path.join(dir, 'secret-file'), FILE_SECRET);
});
afterAll(async () => {
  await fake?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a run directory does not choose secrets', () => {
  it('store.json with an ${env:…} reference (the older form, baseDir and all): refused before connecting, saying what to pass; the secret is sent nowhere', async () => {
    const d = runDirWith('evil-env', { store: `postgresql://victim:\${env:SS_TEST_AWS_SECRET}@127.0.0.1:${fake.port}/db`, baseDir: dir, runId: 'r1' });
    const r = await runCli(['status', d], { env: { SS_TEST_AWS_SECRET: SECRET } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`give --store 'postgresql://victim:\${env:SS_TEST_AWS_SECRET}@127.0.0.1:${fake.port}/db'`);
    expect(r.stderr).not.toContain(SECRET);
    expect(stackTraceLines(r.stderr)).toEqual([]);
    expect(fake.seen).toEqual([]);
  });

  it('store.json with a ${file:…} reference: report and results refused the same way; the file is sent nowhere', async () => {
    const d = runDirWith('evil-file', { store: `postgresql://victim@127.0.0.1:${fake.port}/db`, passwordRef: `\${file:${path.join(dir, 'secret-file')}}`, runId: 'r1' });
    for (const args of [['report', d], ['results', d]]) {
      const r = await runCli(args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('a run directory never chooses which secret is sent where');
    }
    expect(fake.seen).toEqual([]);
  });

  it('store.json without a reference, PGPASSWORD set: connected, but the server asking for a password gets none (not node-postgres\' PGPASSWORD fallback)', async () => {
    const d = runDirWith('evil-plain', { store: `postgresql://victim@127.0.0.1:${fake.port}/db`, runId: 'r1' });
    const before = fake.seen.length;
    const r = await runCli(['status', d], { env: { PGPASSWORD: SECRET } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('asks for a password');
    expect(r.stderr).toContain("give --store 'postgresql://victim:${env:NAME}@127.0.0.1:");
    expect(fake.seen.length).toBe(before + 1);
    expect(fake.seen.at(-1)).toEqual({ params: expect.objectContaining({ user: 'victim', database: 'db' }) });
  });

  it('a store given now that names another host, port, user or database is refused: nothing sent to either', async () => {
    const d = runDirWith('other', { store: `postgresql://victim@127.0.0.1:${fake.port}/db`, runId: 'r1' });
    const before = fake.seen.length;
    for (const store of [`postgresql://victim:\${env:SS_MINE}@127.0.0.1:${fake.port}/otherdb`, `postgresql://me:\${env:SS_MINE}@127.0.0.1:${fake.port}/db`, `postgresql://victim:\${env:SS_MINE}@127.0.0.1:${fake.port === 5432 ? 5433 : 5432}/db`]) {
      const r = await runCli(['status', d, '--store', store], { env: { SS_MINE: SECRET } });
      expect(r.code, store).toBe(2);
      expect(r.stderr).toContain(`names the store postgresql://victim@127.0.0.1:${fake.port}/db, not the one given`);
      expect(r.stderr).not.toContain(SECRET);
    }
    expect(fake.seen.length).toBe(before);
  });

  it('the same store given now (--store with its reference): its password, and only that, is sent', async () => {
    const d = runDirWith('mine', { store: `postgresql://victim@127.0.0.1:${fake.port}/db`, passwordRef: '${env:SOMETHING_ELSE}', runId: 'r1' });
    const r = await runCli(['status', d, '--store', `postgresql://victim:\${env:SS_MINE}@127.0.0.1:${fake.port}/db`], { env: { SS_MINE: 'the-users-own-password', SOMETHING_ELSE: SECRET } });
    expect(r.code).not.toBe(0); // the fake server closes after the password
    expect(fake.seen.at(-1)).toEqual({ params: expect.objectContaining({ user: 'victim' }), password: 'the-users-own-password' });
    expect(fake.seen.map((s) => s.password)).not.toContain(SECRET);
  });
});
