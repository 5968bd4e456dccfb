// The README's first study works as written (issue 28, item 4): its playbook, copied out of the
// README, passes `validate`, `plan` and `run --dry-run` against the lab's inventory (the one
// `npm run lab -- up` writes, for a lab that is not running: nothing is sent), and the mistake the
// README invites (`format: [thick]`) is refused at its line with the allowed values.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { writeLabInventory } from '../helpers/lab-inventory-file.ts';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

/** The YAML block right after "Save this as `playbooks/<name>`". */
function studyOf(readme: string): { name: string; yaml: string } {
  const m = /Save this as `playbooks\/([\w.-]+)`:\s*```yaml\n([\s\S]*?)```/.exec(readme);
  if (!m?.[1] || m[2] === undefined) throw new Error('README: no "Save this as `playbooks/…`:" followed by a yaml block');
  return { name: m[1], yaml: m[2] };
}

describe("the README's first study", () => {
  const study = studyOf(README);
  let lab: Awaited<ReturnType<typeof writeLabInventory>>;
  let playbook: string;

  beforeAll(async () => {
    lab = await writeLabInventory();
    // in a playbooks/ directory, as the README says, so its $schema line resolves the same way
    fs.mkdirSync(path.join(lab.dir, 'playbooks'));
    playbook = path.join(lab.dir, 'playbooks', study.name);
    fs.writeFileSync(playbook, study.yaml);
  });
  afterAll(() => lab.remove());

  it('the README runs these commands on that file', () => {
    for (const cmd of ['validate', 'plan', 'run']) expect(README).toContain(`npx storsweep ${cmd} playbooks/${study.name} -i .lab/inventory.yaml`);
    expect(README).toContain(`npx storsweep run playbooks/${study.name} -i .lab/inventory.yaml --dry-run`);
  });

  it('validate, plan and run --dry-run accept it: two permutations, nothing destroyed', async () => {
    const [validate, plan, dry] = await Promise.all([
      runCli(['validate', playbook, '-i', lab.inventory]),
      runCli(['plan', playbook, '-i', lab.inventory, '--json']),
      runCli(['run', playbook, '-i', lab.inventory, '--dry-run']),
    ]);
    expect(validate.stderr).toBe('');
    expect(validate.code).toBe(0);
    expect(plan.code).toBe(0);
    const planned = JSON.parse(plan.stdout) as { permutations: { steps: { destructive?: boolean }[] }[] };
    expect(planned.permutations).toHaveLength(2);
    expect(planned.permutations.flatMap((p) => p.steps).filter((s) => s.destructive)).toEqual([]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/2 permutations, \d+ calls; nothing was sent/);
  });

  it('the mistake the README suggests trying is refused at its line, naming the allowed formats', async () => {
    expect(README).toContain('Try `format: [thick]` to see one.');
    const wrong = playbook.replace(/\.yaml$/, '-wrong.yaml');
    fs.writeFileSync(wrong, study.yaml.replace('format: [thin, eagerzeroedthick]', 'format: [thick, eagerzeroedthick]'));
    const r = await runCli(['validate', wrong, '-i', lab.inventory]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-wrong\.yaml:\d+:\d+: matrix\.disk\.format\[0\]: expected one of thin, lazyzeroedthick, eagerzeroedthick/);
  });
});
