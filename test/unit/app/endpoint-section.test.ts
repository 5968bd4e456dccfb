// vSphere's `vcenters:` as an endpoint section (providers/vsphere/endpoint.ts), as the core sees it
// through the registry: what an entry reaches — with GOVC_URL taken from the environment the
// inventory was loaded with (a value), never from the process — for the run's facts, the
// provisioning limits workers must agree on, and the targets bound to the submitting machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planFor } from '../../../src/app/config.ts';
import { endpointLimits, measurementFacts } from '../../../src/app/compose.ts';
import { ConfigError } from '../../../src/errors.ts';
import { machineBoundTargets } from '../../../src/app/queue/queue-meta.ts';
import { loadInventory } from '../../../src/config/index.ts';
import { endpointSections } from '../../../src/providers/index.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-endpoint-'));
  fs.writeFileSync(path.join(dir, 'vc-pass'), 'Vc-Secret-1234\n');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

// the guest on another machine: only the vCenter can bind a target to this one
const GUEST = ['sshHosts:', '  guest:', '    host: 10.0.0.5', '    user: bench', '    password: ${file:vc-pass}', '    knownHostsFile: known_hosts'];
const target = (name: string, vcenter: string) => [`  ${name}:`, '    provider: vsphere', `    vcenter: ${vcenter}`, '    host: esx1', `    vm: vm-${name}`, '    guest:', '      sshHost: guest', '      workdir: /bench'];

function load(lines: string[], env: Record<string, string> = {}) {
  const file = path.join(dir, 'inventory.yaml');
  fs.writeFileSync(file, [...GUEST, ...lines, ''].join('\n'));
  return loadInventory(file, env);
}

const entry = (name: string, url: string | null, max?: number) => [`  ${name}:`, ...(url ? [`    url: ${url}`] : []), '    username: admin', '    password: ${file:vc-pass}', ...(max ? [`    maxConcurrent: ${max}`] : [])];

describe("vcenters: is vSphere's endpoint section", () => {
  it('the registry lists it as vSphere declares it: its secret field and its file field', () => {
    const vc = endpointSections().find((e) => e.key === 'vcenters');
    expect(vc).toMatchObject({ secretFields: [['password']], pathFields: ['caFile'] });
  });

  it('two entries naming one endpoint share one limit, the smallest; an entry without a URL takes GOVC_URL from the environment given', () => {
    const inv = load(['vcenters:', ...entry('a', 'https://VC.lab:443/sdk/', 4), ...entry('b', 'https://vc.lab/sdk', 3), ...entry('c', null, 5), 'targets:', ...target('ta', 'a'), ...target('tb', 'b'), ...target('tc', 'c')], { GOVC_URL: 'https://other.lab/sdk' });
    expect(endpointLimits(['ta', 'tb', 'tc'], inv)).toEqual({ 'https://vc.lab/sdk': 3, 'https://other.lab/sdk': 5 });
    expect(measurementFacts(['tc'], inv)['vcenters.c.url']).toBe('https://other.lab/sdk');
  });

  it("without GOVC_URL in the inventory's environment an entry without a URL reaches nothing, whatever the process has", () => {
    process.env.GOVC_URL = 'https://process-env.lab/sdk';
    try {
      const inv = load(['vcenters:', ...entry('c', null), 'targets:', ...target('tc', 'c')], { GOVC_URL: 'https://given.lab/sdk', GOVC_USERNAME: 'u', GOVC_PASSWORD: 'Vc-Secret-1234' });
      expect(endpointLimits(['tc'], { ...inv, env: {} })).toEqual({});
      expect(measurementFacts(['tc'], { ...inv, env: {} })['vcenters.c.url']).toBeUndefined();
      expect(endpointLimits(['tc'], inv)).toEqual({ 'https://given.lab/sdk': 2 });
    } finally {
      delete process.env.GOVC_URL;
    }
  });

  it('a target on a vCenter at a loopback address is bound to the machine that runs it; GOVC_URL counts too', () => {
    const inv = load(['vcenters:', ...entry('here', 'https://127.0.0.1:8989/sdk'), ...entry('far', 'https://vc.example.com/sdk'), ...entry('env', null), 'targets:', ...target('t-here', 'here'), ...target('t-far', 'far'), ...target('t-env', 'env')], { GOVC_URL: 'https://[::1]:9443/sdk' });
    expect(machineBoundTargets(['t-here', 't-far', 't-env'], inv)).toEqual(['t-here', 't-env']);
  });

  it('plan takes GOVC_* from the environment it is handed (as the CLI reads it), not from the process', () => {
    const inv = path.join(dir, 'inventory.yaml');
    fs.writeFileSync(inv, [...GUEST, 'targets:', ...target('t', 'from-env'), ''].join('\n'));
    const pb = path.join(dir, 'pb.yaml');
    fs.writeFileSync(pb, ['name: env-study', 'target: t', 'matrix:', '  datastore:', '    kind: [existing]', '  disk:', '    format: [thin]', '    sizeGb: [1]', '  workload:', '    profile: [cdm8-default]', ''].join('\n'));
    fs.appendFileSync(inv, '    datastore: ds1\n');
    const env = { GOVC_URL: 'https://vc.from-env.lab/sdk', GOVC_USERNAME: 'u', GOVC_PASSWORD: 'Vc-Secret-1234' };
    expect(planFor(pb, inv, 'rplan0000', [], env).permutations).toHaveLength(1);
    expect(() => planFor(pb, inv, 'rplan0000', [], {})).toThrow(ConfigError);
  });
});
