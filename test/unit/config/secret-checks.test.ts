// A secret value may appear only in a secret field: plans, ledgers, run directories and reports are
// built from the other fields and keep them as written. Refused at its line; never repeated.
import { describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/config/index.ts';
import { ConfigError, formatDiagnostic } from '../../../src/errors.ts';

const F = 'test/fixtures/config/inv-secret-in-field.yaml';
const PASTED = 'contains the value of the secret sshHosts.guest.passphrase (${env:STORSWEEP_FIXTURE_PW}); a secret may appear only in a secret field (password, passphrase), never in a name, path or URL, which plans, ledgers and reports keep as written';

function diagnostics(file: string, env: NodeJS.ProcessEnv): string[] {
  try {
    loadInventory(file, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.diagnostics.map(formatDiagnostic);
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('secrets stay in secret fields', () => {
  it('a secret value in a path, a datastore or a target name, and a password in a URL or host: each at its line, the value never repeated', () => {
    const d = diagnostics(F, { STORSWEEP_FIXTURE_PW: 'Fixture-Secret-1' });
    expect(d).toEqual([
      `${F}:5:10: vcenters.vc.url: a password inside a URL or host (user:password@) is refused: it would be kept and printed with the URL; give username: and password: \${env:NAME} (or \${file:path}) instead`,
      `${F}:15:11: sshHosts.esx.host: a password inside a URL or host (user:password@) is refused: it would be kept and printed with the URL; give username: and password: \${env:NAME} (or \${file:path}) instead`,
      `${F}:24:15: targets.pasted.testFile: ${PASTED}`,
      `${F}:25:3: targets.vc-***: ${PASTED}`,
      `${F}:30:16: targets.vc-***.datastore: ${PASTED}`,
    ]);
    for (const line of d) expect(line).not.toMatch(/Fixture-Secret-1|Plain-Pass-9/);
  });

  it('the GOVC_PASSWORD a vSphere target falls back to counts as a secret of the inventory', () => {
    const d = diagnostics(F, { STORSWEEP_FIXTURE_PW: 'another-passphrase', GOVC_URL: 'vc.example.com', GOVC_PASSWORD: 'Secret-1/test' });
    expect(d).toContain(`${F}:24:15: targets.pasted.testFile: contains the value of the secret GOVC_PASSWORD ($GOVC_PASSWORD); a secret may appear only in a secret field (password, passphrase), never in a name, path or URL, which plans, ledgers and reports keep as written`);
  });
});
