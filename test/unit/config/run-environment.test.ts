// Facts where they belong: an inventory target's `environment:`, a playbook's `environmentOf:` per
// axis value (checked against the matrix at its key), and the datastore behind `existing` — all in
// the run's environment, each key saying what it is about.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../src/config/index.ts';
import { runEnvironment } from '../../../src/config/run-environment.ts';
import { ConfigError } from '../../../src/errors.ts';
import { renderMarkdown } from '../../../src/report/markdown.ts';
import { buildReport } from '../../../src/report/model.ts';
import { labRecords } from '../report/helpers.ts';

let dir: string;
const write = (name: string, lines: string[]) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, lines.join('\n') + '\n');
  return f;
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-env-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('environment per target and per axis value', () => {
  it('the inventory target, environmentOf and the existing datastore, each under what it is about', () => {
    const inv = write('inv.yaml', [
      'vcenters:',
      '  vc: { url: "https://127.0.0.1:8989/sdk", username: a, password: "${env:SS_ENV_TEST_PW}", insecure: true }',
      'targets:',
      '  array-01:',
      '    provider: vsphere',
      '    vcenter: vc',
      '    host: h',
      '    vm: v',
      '    datastore: ds-powerstore',
      '    guest: { via: tools, os: linux, credential: { username: root, password: "${env:SS_ENV_TEST_PW}" }, workdir: /tmp/x }',
      '    environment: { array: PowerStore 500T, raid: RAID 5 }',
    ]);
    const pb = write('pb.yaml', [
      'name: env',
      'target: array-01',
      'matrix:',
      '  datastore:',
      '    kind: [existing]',
      '  disk:',
      '    format: [thin, eagerzeroedthick]',
      '  workload:',
      '    profile: [cdm8-default]',
      'environment: { protocol: iSCSI 25GbE }',
      'environmentOf:',
      '  disk.format=thin: { note: thin provisioned on the array too }',
    ]);
    const loadedInv = loadInventory(inv, { SS_ENV_TEST_PW: 'a-long-password' });
    const env = runEnvironment(loadPlaybook(pb).playbook, loadedInv.inventory, ['array-01']);
    expect(env).toEqual({
      protocol: 'iSCSI 25GbE',
      'target=array-01: array': 'PowerStore 500T',
      'target=array-01: raid': 'RAID 5',
      'target=array-01: datastore.kind=existing is': 'ds-powerstore',
      'disk.format=thin: note': 'thin provisioned on the array too',
    });
    const md = renderMarkdown(buildReport(labRecords(), { runId: 'r', environment: env! }));
    expect(md).toMatch(/target=array-01: datastore\.kind=existing is.*ds-powerstore/);
  });

  it('environmentOf names an axis of the matrix and one of its values, at its key', () => {
    const pb = write('bad.yaml', ['name: env', 'target: t', 'matrix:', '  workload:', '    profile: [cdm8-default]', 'environmentOf:', '  disk.format=thin: { a: b }', '  workload.profile=cdm3: { a: b }']);
    let message = '';
    try {
      loadPlaybook(pb);
    } catch (err) {
      if (err instanceof ConfigError) message = err.message;
    }
    expect(message).toContain('bad.yaml:7:3: environmentOf.disk.format=thin: "disk.format=thin": expected axis=value with an axis of the matrix (axes: target, workload.profile)');
    expect(message).toContain('bad.yaml:8:3: environmentOf.workload.profile=cdm3: "workload.profile=cdm3": "cdm3" is not a value of workload.profile (values: cdm8-default)');
  });
});
