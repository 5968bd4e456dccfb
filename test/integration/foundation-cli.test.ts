// The CLI's configuration commands as a user meets them: `validate` prints every diagnostic with
// file:line:col and exits 2 without a stack trace; `schema` prints what is committed under schemas/.
// Every test runs its own CLI processes on committed files: they run at once.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, stackTraceLines } from '../helpers/cli.ts';

const FIX = 'test/fixtures/config';

describe.concurrent('storsweep validate', () => {
  it('reports ALL errors of a playbook at once, exit 2, no stack trace', async () => {
    const F = `${FIX}/pb-many-errors.yaml`;
    const r = await runCli(['validate', F]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `${F}:1:7: name: expected a lowercase name of letters, digits and dashes`,
      `${F}:5:20: matrix.disk.format[1]: expected one of thin, lazyzeroedthick, eagerzeroedthick, rdm-physical, rdm-virtual, vhdx-fixed, vhdx-dynamic, passthrough; got "eagerzero"`,
      `${F}:7:14: matrix.workload.profile: an axis needs at least one value`,
      `${F}:9:13: settings.fileSize: expected a size like 64m, 1g, 1024m or a number of bytes`,
      `${F}:10:11: settings.passes: expected a number of passes from 1 to 100; got 0`,
      `${F}:11:9: repeat: expected a number of repetitions from 1 to 1000; got 0`,
      `${F}:13:14: order.randomize: expected boolean; got "maybe"`,
    ]);
    expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it('bad YAML: exit 2 with the position', async () => {
    const r = await runCli(['validate', `${FIX}/pb-bad-yaml.yaml`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${FIX}/pb-bad-yaml.yaml:6:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]\n`);
  });

  it('with -i: inventory errors (a missing secret) and playbook/inventory mismatches', async () => {
    const secret = await runCli(['validate', 'playbooks/quickstart.yaml', '-i', `${FIX}/inv-missing-secret-env.yaml`], { env: { STORSWEEP_FIXTURE_UNSET_PASSWORD: undefined } });
    expect(secret.code).toBe(2);
    expect(secret.stderr).toBe(
      `${FIX}/inv-missing-secret-env.yaml:5:15: sshHosts.esx.password: secret \${env:STORSWEEP_FIXTURE_UNSET_PASSWORD}: environment variable STORSWEEP_FIXTURE_UNSET_PASSWORD is not set\n`,
    );
    const target = await runCli(['validate', 'playbooks/quickstart.yaml', '-i', `${FIX}/inv-ok.yaml`]);
    expect(target.code).toBe(0);
    expect(target.stdout).toBe(`playbooks/quickstart.yaml: ok (against ${FIX}/inv-ok.yaml)\n`);
    const missing = await runCli(['validate', `${FIX}/pb-target-not-in-inventory.yaml`, '-i', `${FIX}/inv-ok.yaml`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`${FIX}/pb-target-not-in-inventory.yaml:2:9: target: no target "lab-nowhere" in ${FIX}/inv-ok.yaml (have: lab-guest, lab-local, vc-no-rdm)\n`);
    for (const r of [secret, missing]) expect(stackTraceLines(r.stderr)).toEqual([]);
  });

  it("-i with a bad store: refused at its line and column with the allowed values, as run, submit and worker would refuse it", async () => {
    const F = `${FIX}/inv-bad-store.yaml`;
    const r = await runCli(['validate', '-i', F]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${F}:2:8: store: store URL sslmode="allow": expected one of disable, prefer, require, verify-full\n`);
    const submit = await runCli(['submit', 'playbooks/quickstart.yaml', '-i', F]);
    expect(submit).toMatchObject({ code: 2, stderr: r.stderr });
  });

  it('a missing file: exit 2, one line, no stack trace', async () => {
    const r = await runCli(['validate', 'no/such/playbook.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('no/such/playbook.yaml:1:1: file not found\n');
  });

  it('a valid playbook: exit 0', async () => {
    const r = await runCli(['validate', 'playbooks/quickstart.yaml']);
    expect(r).toEqual({ code: 0, stdout: 'playbooks/quickstart.yaml: ok\n', stderr: '' });
  });
});

describe.concurrent('storsweep schema', () => {
  for (const kind of ['playbook', 'inventory']) {
    it(`schemas/${kind}.schema.json is current (regenerate with \`npm run schemas\`)`, async () => {
      const r = await runCli(['schema', kind]);
      expect(r.code).toBe(0);
      const committed = fs.readFileSync(path.join(REPO_ROOT, 'schemas', `${kind}.schema.json`), 'utf8');
      expect(r.stdout).toBe(committed);
      const schema = JSON.parse(r.stdout) as { $schema: string; properties: Record<string, unknown>; additionalProperties: boolean };
      expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
      // unknown keys are errors in the editor too
      expect(schema.additionalProperties).toBe(false);
    });
  }

  it('the playbook schema offers the keys a playbook has and the enum values of disk.format', async () => {
    const schema = JSON.parse((await runCli(['schema', 'playbook'])).stdout) as {
      required: string[];
      properties: Record<string, unknown> & { matrix: { properties: { disk: { properties: { format: { items: { enum: string[] } } } } } } };
    };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['name', 'target', 'matrix', 'settings', 'include', 'exclude', 'repeat', 'order', 'baseline']));
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'target', 'matrix']));
    expect(schema.required).not.toContain('repeat'); // defaulted keys stay optional for the editor
    expect(schema.properties.matrix.properties.disk.properties.format.items.enum).toContain('eagerzeroedthick');
  });

  it('an unknown kind is a usage error', async () => {
    const r = await runCli(['schema', 'bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('schema: expected "playbook" or "inventory", got "bogus"\n');
  });
});

describe.concurrent('storsweep --help', () => {
  it('lists every command', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['validate', 'plan', 'schema', 'run', 'results', 'report']) expect(r.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
  });
});
