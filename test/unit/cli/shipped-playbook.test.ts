// A playbook path under playbooks/ that the working directory lacks is the one shipped with
// storsweep; a file of that name in the directory, an absolute path or a path leaving playbooks/
// stays as given.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/cli.ts';
import { shippedPlaybook } from '../../../src/cli/shipped-playbook.ts';

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'storsweep-shipped-'));
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

describe('shippedPlaybook', () => {
  it('an empty directory: playbooks/quickstart.yaml is the shipped one, and the note says so', () => {
    const r = shippedPlaybook('playbooks/quickstart.yaml', cwd);
    expect(r.file).toBe(path.join(REPO_ROOT, 'playbooks', 'quickstart.yaml'));
    expect(r.note).toBe(`playbooks/quickstart.yaml: not in this directory; using the one shipped with storsweep: ${r.file}\n`);
  });

  it('the directory\'s own file wins; unknown, absolute and escaping paths stay as given', () => {
    fs.mkdirSync(path.join(cwd, 'own', 'playbooks'), { recursive: true });
    fs.writeFileSync(path.join(cwd, 'own', 'playbooks', 'quickstart.yaml'), 'name: mine\n');
    expect(shippedPlaybook('playbooks/quickstart.yaml', path.join(cwd, 'own'))).toEqual({ file: 'playbooks/quickstart.yaml' });
    expect(shippedPlaybook('playbooks/nope.yaml', cwd)).toEqual({ file: 'playbooks/nope.yaml' });
    expect(shippedPlaybook('/etc/playbooks/quickstart.yaml', cwd)).toEqual({ file: '/etc/playbooks/quickstart.yaml' });
    expect(shippedPlaybook('playbooks/../package.json', cwd)).toEqual({ file: 'playbooks/../package.json' });
    expect(shippedPlaybook('quickstart.yaml', cwd)).toEqual({ file: 'quickstart.yaml' });
  });
});
