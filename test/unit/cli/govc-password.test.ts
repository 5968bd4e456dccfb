// GOVC_PASSWORD is a secret of a run only when a target uses it (app/compose.ts): an unused short
// value must not be registered for masking (it garbled "202:1" into "202:***" and told the
// password), and a used one is held to the same minimum length as every other secret.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { compose } from '../../../src/app/compose.ts';
import { loadInventory } from '../../../src/config/index.ts';
import { redact } from '../../../src/input/secrets.ts';
import { UsageError } from '../../../src/errors.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-govc-'));
  fs.writeFileSync(path.join(dir, 'vc-pass'), 'Vc-Secret-1234\n');
});
afterEach(() => {
  vi.unstubAllEnvs();
  fs.rmSync(dir, { recursive: true, force: true });
});

const inventory = (vcenter: string[]) =>
  [
    'vcenters:',
    '  vc:',
    ...vcenter,
    'targets:',
    '  lab:',
    '    provider: vsphere',
    '    vcenter: vc',
    '    host: esx1',
    '    vm: bench-vm',
    '    guest:',
    '      workdir: /bench',
    '',
  ].join('\n');

function composeLab(yaml: string) {
  const file = path.join(dir, 'inventory.yaml');
  fs.writeFileSync(file, yaml);
  const inv = loadInventory(file, process.env);
  return compose(inv.inventory.targets['lab']!, inv);
}

describe('GOVC_PASSWORD', () => {
  it('is not registered as a secret when the inventory gives the vCenter its own password', () => {
    vi.stubEnv('GOVC_URL', 'https://example.invalid/sdk');
    vi.stubEnv('GOVC_USERNAME', 'x');
    vi.stubEnv('GOVC_PASSWORD', '1');
    composeLab(inventory(['    url: https://vc.example.com/sdk', '    username: administrator@vsphere.local', '    password: ${file:vc-pass}']));
    expect(redact('attached scsi0:1 at 202:1, rep 1/1')).toBe('attached scsi0:1 at 202:1, rep 1/1');
    expect(redact('login with Vc-Secret-1234')).toBe('login with ***');
  });

  it('a short one the target does use is refused with the minimum length (at load, and by compose), never masked', () => {
    vi.stubEnv('GOVC_URL', 'https://example.invalid/sdk');
    vi.stubEnv('GOVC_USERNAME', 'x');
    vi.stubEnv('GOVC_PASSWORD', '1');
    const file = path.join(dir, 'inventory.yaml');
    fs.writeFileSync(file, inventory(['    url: https://vc.example.com/sdk']));
    expect(() => loadInventory(file, process.env)).toThrow(/inventory\.yaml:\d+:\d+: targets\.lab\.vcenter: the password from GOVC_PASSWORD\/GOVC_URL .*shorter than 7 characters/);
    // the environment compose reads is its own: a library caller that loaded earlier gets the same rule
    vi.stubEnv('GOVC_PASSWORD', 'Long-Enough-99');
    const inv = loadInventory(file, process.env);
    vi.stubEnv('GOVC_PASSWORD', '1');
    expect(() => compose(inv.inventory.targets['lab']!, inv)).toThrow(UsageError);
    expect(() => compose(inv.inventory.targets['lab']!, inv)).toThrow(/GOVC_PASSWORD.*shorter than 7 characters/);
    expect(redact('rep 1/1')).toBe('rep 1/1');
  });

  it('a long enough one the target uses is masked', () => {
    vi.stubEnv('GOVC_URL', 'https://example.invalid/sdk');
    vi.stubEnv('GOVC_USERNAME', 'x');
    vi.stubEnv('GOVC_PASSWORD', 'Env-Secret-5678');
    composeLab(inventory(['    url: https://vc.example.com/sdk']));
    expect(redact('login with Env-Secret-5678 failed')).toBe('login with *** failed');
  });
});
