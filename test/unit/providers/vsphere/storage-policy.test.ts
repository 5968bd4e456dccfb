// disk.policy offline: validate refuses a value that cannot be a policy name at its file:line:col
// (the name itself is looked up on vCenter at run start: test/integration/storage-policy.test.ts),
// and the rules of a policy as PBM returns them read as words for the records.
import { describe, expect, it } from 'vitest';
import { loadInventory, loadPlaybook } from '../../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../../src/errors.ts';
import { checkPlaybookAgainst } from '../../../../src/plan/check.ts';
import { policyRules } from '../../../../src/providers/vsphere/pbm.ts';
import { isPolicyName } from '../../../../src/providers/vsphere/storage-policy.ts';

function refused(file: string): string[] {
  try {
    checkPlaybookAgainst(loadPlaybook(file), loadInventory('test/fixtures/config/inv-providers.yaml', { HV_GUEST_PASSWORD: 'x4x-secret' }));
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error(`expected ${file} to be refused`);
}

describe('disk.policy', () => {
  it('validate refuses a number and a blank name at their line:col', () => {
    const F = 'test/fixtures/config/pb-policy-shapes.yaml';
    expect(refused(F)).toEqual([
      `${F}:9:30: matrix.disk.policy[1]: expected string; got number 7`,
      `${F}:9:33: matrix.disk.policy[2]: expected a storage policy name: 1 to 80 characters, no control characters`,
    ]);
  });

  it('a name: 1 to 80 characters, no control characters', () => {
    expect(isPolicyName('vSAN Default Storage Policy')).toBe(true);
    expect(isPolicyName('x'.repeat(80))).toBe(true);
    expect(isPolicyName('x'.repeat(81))).toBe(false);
    expect(isPolicyName('a\tb')).toBe(false);
    expect(isPolicyName(' ')).toBe(false);
    expect(isPolicyName(3)).toBe(false);
  });

  it('rules in words: a tag rule by its category and tags, any other by namespace.property = value', () => {
    const profile = {
      constraints: {
        subProfiles: {
          capability: [
            { id: { namespace: 'VSAN', id: 'hostFailuresToTolerate' }, constraint: { propertyInstance: { id: 'hostFailuresToTolerate', value: 1 } } },
            { id: { namespace: 'http://www.vmware.com/storage/tag', id: 'tier' }, constraint: { propertyInstance: { id: 'com.vmware.storage.tag.tier.property', value: { values: ['silver', 'gold'] } } } },
          ],
        },
      },
    };
    expect(policyRules(profile)).toEqual(['VSAN.hostFailuresToTolerate = 1', 'tag tier in silver|gold']);
  });
});
