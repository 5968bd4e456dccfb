// `-i a.yaml -i b.yaml`: one's own targets beside a lab's without copying the lab's file. Later
// files add or replace entries by name and use the earlier files' endpoints and secrets; what a
// file names relative to itself stays relative to that file; a problem is reported in the file
// that defines the entry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/config/index.ts';
import { composeContext } from '../../../src/app/compose.ts';
import { createEndpointPool } from '../../../src/providers/endpoint-pool.ts';
import { planFor } from '../../../src/app/config.ts';
import { configErrorOf } from '../../helpers/config-errors.ts';

let root: string;
let lab: string;
let mine: string;

const write = (file: string, lines: string[]) => fs.writeFileSync(file, lines.join('\n') + '\n');

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-layers-'));
  fs.mkdirSync(path.join(root, 'lab'));
  fs.mkdirSync(path.join(root, 'study'));
  lab = path.join(root, 'lab', 'inventory.yaml');
  mine = path.join(root, 'study', 'arrays.yaml');
  fs.writeFileSync(path.join(root, 'lab', 'vc-password'), 'lab-vcenter-password\n');
  fs.writeFileSync(path.join(root, 'study', 'guest-password'), 'array-guest-password\n');
  // the lab's inventory as `lab up` writes it: paths relative to its own directory
  write(lab, [
    'sshHosts:',
    '  lab: { host: 127.0.0.1, port: 2222, user: bench, privateKeyFile: id_ed25519, knownHostsFile: known_hosts }',
    'vcenters:',
    '  lab-vc: { url: "https://127.0.0.1:8989/sdk", username: admin, password: "${file:vc-password}", insecure: true }',
    'targets:',
    '  lab-local: { provider: local, workdir: /var/tmp/lab }',
    '  lab-guest: { provider: ssh, sshHost: lab, workdir: /var/tmp/lab }',
  ]);
  // one's own study: its targets only, on the lab's SSH host and vCenter
  write(mine, [
    'targets:',
    '  array-a: { provider: ssh, sshHost: lab, workdir: /var/tmp/array-a }',
    '  lab-local: { provider: local, workdir: /var/tmp/mine }',
    '  array-vc:',
    '    provider: vsphere',
    '    vcenter: lab-vc',
    '    host: DC0_H0',
    '    vm: DC0_H0_VM0',
    '    datastore: LocalDS_0',
    '    guest:',
    '      via: tools',
    '      os: linux',
    '      credential: { username: root, password: "${file:guest-password}" }',
    '      workdir: /var/tmp/array-vc',
  ]);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const refusal = (files: string[]): string => configErrorOf(() => loadInventory(files, process.env));

describe('several inventories (-i a -i b)', () => {
  it("the later file's targets use the earlier file's SSH host and vCenter; a name given twice is the later file's", () => {
    const inv = loadInventory([lab, mine], process.env);
    expect(Object.keys(inv.inventory.targets).sort()).toEqual(['array-a', 'array-vc', 'lab-guest', 'lab-local']);
    expect(inv.inventory.targets['lab-local']).toMatchObject({ workdir: '/var/tmp/mine' });
    expect(inv.files).toEqual([lab, mine]);
  });

  it("each file's relative paths and ${file:…} secrets are read from its own directory", () => {
    const inv = loadInventory([lab, mine], process.env);
    const ctx = composeContext(inv, createEndpointPool());
    const ssh = ctx.ssh('lab');
    expect(ssh.privateKeyPath).toBe(path.join(root, 'lab', 'id_ed25519'));
    expect(ssh.knownHostsFile).toBe(path.join(root, 'lab', 'known_hosts'));
    expect(ctx.reveal((ctx.endpoint('vcenters', 'lab-vc') as { password: string }).password)).toBe('lab-vcenter-password');
    const vc = inv.inventory.targets['array-vc'] as { guest: { credential: { password: string } } };
    expect(ctx.reveal(vc.guest.credential.password)).toBe('array-guest-password');
  });

  it('alone, the later file is refused at its own lines: the SSH host and vCenter it uses are not in it', () => {
    const m = refusal([mine]);
    expect(m).toContain(`${mine}:2:`);
    expect(m).toContain('no sshHosts entry named "lab"');
  });

  it('a problem is reported in the file that defines the entry, not the first one', () => {
    const bad = path.join(root, 'study', 'bad.yaml');
    write(bad, ['targets:', '  # a typo in the host name', '  array-b: { provider: ssh, sshHost: labb, workdir: /var/tmp/b }']);
    const m = refusal([lab, bad]);
    expect(m).toMatch(new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3:\\d+: targets\\.array-b\\.sshHost: no sshHosts entry named "labb" \\(have: lab\\)`));
  });

  it('a playbook naming only the later file\'s target plans against both files', () => {
    const pb = path.join(root, 'study', 'pb.yaml');
    write(pb, ['name: own-study', 'target: array-a', 'matrix:', '  workload:', '    profile: [cdm8-default]']);
    const plan = planFor(pb, [lab, mine], 'r1', [], process.env);
    expect(plan.target).toBe('array-a');
    // the error for a target in neither names both files
    write(pb, ['name: own-study', 'target: array-z', 'matrix:', '  workload:', '    profile: [cdm8-default]']);
    expect(() => planFor(pb, [lab, mine], 'r1', [], process.env)).toThrow(`no target "array-z" in ${lab} + ${mine}`);
  });
});
