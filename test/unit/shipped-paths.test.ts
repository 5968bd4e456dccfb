// A fresh clone is all a user has: what the repository ships (README, docs, playbooks, inventories,
// examples, scripts, bench, CI, sources and tests) never points to a path outside it — no
// `../shared/…` of the development machine, no `/work/…`, no home directory — and the example data
// the README points to ships in the repository and imports.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importFile } from '../../src/importers/index.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What a clone holds and a user reads or runs; recorded data (test/fixtures) is not prose. */
const SHIPPED = ['README.md', 'package.json', '.ci', 'docs', 'playbooks', 'inventories', 'examples', 'scripts', 'bench', 'bin', 'schemas', 'src', 'test'];
const SKIP_DIRS = new Set(['node_modules', 'fixtures', '__pycache__']);
const TEXT = /\.(md|ya?ml|json|ts|mjs|js|sh|py|go|txt)$|^run$/;

function walk(rel: string, out: string[]): void {
  const abs = path.join(ROOT, rel);
  if (!fs.existsSync(abs)) return;
  const st = fs.lstatSync(abs);
  if (st.isSymbolicLink()) return;
  if (st.isFile()) {
    if (TEXT.test(path.basename(rel))) out.push(rel);
    return;
  }
  for (const name of fs.readdirSync(abs)) {
    if (SKIP_DIRS.has(name) || (rel === 'bench' && name === 'results')) continue;
    walk(path.join(rel, name), out);
  }
}

/** A machine's own paths: the development checkout's siblings, its work tree, home directories. */
const OUTSIDE = /\.\.\/shared(?![\w.-])|(?<![\w.])shared\/(reference|fixtures|STYLE\.md)|(?<![\w.~])\/(work|home\/\w+|Users\/\w+)\//;
/** A relative path that climbs: `../x`, `../../x` … — it must stay inside the repository from its file. */
const CLIMB = /(?<![\w.~/])((?:\.\.\/)+)([\w.-][\w./-]*)/g;

/** Every shipped line that names a place outside the repository, as `file:line: text`. */
function outsideReferences(files: readonly string[], read: (f: string) => string): string[] {
  const found: string[] = [];
  for (const f of files) {
    read(f).split('\n').forEach((text, i) => {
      const at = `${f}:${i + 1}: ${text.trim()}`;
      if (OUTSIDE.test(text)) {
        found.push(at);
        return;
      }
      for (const m of text.matchAll(CLIMB)) {
        // The README shows a playbook's first line, whose `$schema=` is relative to playbooks/.
        const from = /\$schema=$/.test(text.slice(0, m.index)) ? 'playbooks' : path.dirname(f);
        const target = path.resolve(ROOT, from, m[1]! + m[2]!);
        if (path.relative(ROOT, target).startsWith('..')) found.push(at);
      }
    });
  }
  return found;
}

describe('shipped files point only inside the repository', () => {
  const files: string[] = [];
  for (const top of SHIPPED) walk(top, files);

  it('the scan covers the README, every playbook, inventory, example, script and the CI entry point', () => {
    for (const f of ['README.md', '.ci/run', 'scripts/demo.sh', 'playbooks/vmfs-block-size.yaml', 'inventories/example-vcenter.yaml', 'examples/vmfs3-esx41/README.md', 'docs/architecture.md']) {
      expect(files).toContain(f);
    }
  });

  it('no shipped file names ../shared, /work/, a home directory, or a relative path that leaves the repository', () => {
    // (this file is left out: it spells the patterns it looks for)
    expect(outsideReferences(files.filter((f) => f !== 'test/unit/shipped-paths.test.ts'), (f) => fs.readFileSync(path.join(ROOT, f), 'utf8'))).toEqual([]);
  });

  it('the scan finds each kind of outside reference (so an empty list above means something)', () => {
    const lines: Record<string, string> = {
      'README.md': 'compare with ../shared/fixtures/seeds/cdm3-vmfs3-1mb.txt\nsee shared/reference/x.md',
      'playbooks/p.yaml': '# yaml-language-server: $schema=../schemas/playbook.schema.json\n# data in ../../elsewhere/seeds',
      'docs/a.md': 'copy /work/main/runs/x and /home/alice/data; but /dev/sdb, ~/.ssh/known_hosts and ../README.md are fine',
      'bench/scale/child.ts': "import { x } from '../../src/plan/plan.ts';\nimport { y } from '../../../outside.ts';",
      'src/providers/local/index.ts': "import { fioGuestResources } from '../shared-resources.ts';",
    };
    expect(outsideReferences(Object.keys(lines), (f) => lines[f]!)).toEqual([
      'README.md:1: compare with ../shared/fixtures/seeds/cdm3-vmfs3-1mb.txt',
      'README.md:2: see shared/reference/x.md',
      'playbooks/p.yaml:2: # data in ../../elsewhere/seeds',
      'docs/a.md:1: copy /work/main/runs/x and /home/alice/data; but /dev/sdb, ~/.ssh/known_hosts and ../README.md are fine',
      "bench/scale/child.ts:2: import { y } from '../../../outside.ts';",
    ]);
  });

  it('the README schema line resolves from playbooks/, where playbooks carry it', () => {
    expect(outsideReferences(['README.md'], () => '# yaml-language-server: $schema=../schemas/playbook.schema.json')).toEqual([]);
  });
});

describe('example data the README, the guide and playbooks point to ships and imports', () => {
  const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const guide = fs.readdirSync(path.join(ROOT, 'docs/guide')).filter((f) => f.endsWith('.md'))
    .map((f) => fs.readFileSync(path.join(ROOT, 'docs/guide', f), 'utf8'));
  const named = [...new Set([README, ...guide, fs.readFileSync(path.join(ROOT, 'playbooks/vmfs-block-size.yaml'), 'utf8')]
    .flatMap((t) => [...t.matchAll(/examples\/[\w./-]+\.txt/g)].map((m) => m[0])))];

  it('the README names the published VMFS3 numbers in examples/', () => {
    expect(named).toContain('examples/vmfs3-esx41/cdm3-vmfs3-1mb.txt');
  });

  it.each(['1', '2', '4', '8'])('examples/vmfs3-esx41/cdm3-vmfs3-%smb.txt is a CrystalDiskMark 3.0 export of eight tests', async (mb) => {
    const r = await importFile(path.join(ROOT, `examples/vmfs3-esx41/cdm3-vmfs3-${mb}mb.txt`));
    expect(r.warnings).toEqual([]);
    expect(r.records).toHaveLength(8);
    expect(new Set(r.records.map((x) => x.tool.name))).toEqual(new Set(['crystaldiskmark']));
  });

  it('every examples/ path the README, the guide or a playbook names exists', () => {
    for (const f of named) expect(fs.existsSync(path.join(ROOT, f)), f).toBe(true);
  });
});
