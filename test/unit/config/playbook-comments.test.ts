// The commands a shipped playbook's comments tell a user to type name files that exist, and the
// VMFS3 study points at the published table (a single untagged export lines up with nothing).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const files = fs.readdirSync('playbooks').filter((f) => f.endsWith('.yaml'));

describe('shipped playbook comments', () => {
  it.each(files)('%s: every playbooks/ and examples/ path in a storsweep command exists', (f) => {
    const comments = fs.readFileSync(path.join('playbooks', f), 'utf8').split('\n').filter((l) => l.startsWith('#'));
    for (const l of comments.filter((c) => /storsweep (run|report|compare|validate|plan)\b/.test(c))) {
      for (const p of l.match(/\b(playbooks|examples)\/[\w./-]+/g) ?? []) expect(fs.existsSync(p.replace(/[.,;:]$/, '')), `${f}: ${l}`).toBe(true);
    }
  });

  it('the VMFS3 study compares with the published table, not one untagged export', () => {
    const text = fs.readFileSync('playbooks/vmfs-block-size.yaml', 'utf8');
    expect(text).toContain('npx storsweep report runs/<runDir> examples/vmfs3-esx41/published.csv');
    expect(text).not.toMatch(/compare runs\/<runDir> examples\/vmfs3-esx41\/cdm3-vmfs3-1mb\.txt/);
  });
});
