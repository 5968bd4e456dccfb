// Which folder of src/ and bench/ may import which: the one table of the import graph, checked by
// test/unit/architecture/import-graph.test.ts (every import allowed here, every folder and top-level
// file of src/ has a row, no file-level import cycle, and the table itself has no cycle: no two rows
// may import each other).
//
// The flow a playbook takes is config → plan → run → results → report; imports point the other way
// down the layers, from the CLI at the top to the leaves at the bottom:
//
//   cli → app → run, report, importers, lab
//        run → plan → config → providers (registry → each provider → shared provider code)
//        → workloads → ssh, results → contract, input, text, stats, errors
//
// A row is a path from the repository root: a folder, a file, or `folder/*` (each folder directly
// inside it, with that rule, unless it has a row of its own). A file belongs to the most specific
// row. `may` names rows; `'*'` is every row but `except` and the rows that may import this one.
// Adding a folder is one line here; listing it in another row's `may` is a second line only if a
// row that names its imports one by one should import it.
import type { LayerTable } from './import-graph.ts';

/** the leaves most layers use */
const BASE = ['src/contract', 'src/errors.ts', 'src/limits.ts', 'src/text', 'src/input', 'src/lazy.ts'];
/** what every provider folder may use: the contract, the shared provider code, SSH and the workloads */
const PROVIDER = [...BASE, 'src/providers', 'src/ssh', 'src/workloads'];
/** what the report and its renderers may use: records and statistics, never input/ (a report reads no file) */
const REPORT = ['src/contract', 'src/errors.ts', 'src/text', 'src/results', 'src/stats'];

export const LAYERS: LayerTable = {
  // ── the leaves: import nothing of ours, or only each other ──────────────────────────────────────
  'src/contract': { may: [], why: 'the contract is the leaf every layer shares: types only, so it imports nothing of ours (a type it names lives in it)' },
  'src/stats': { may: [], why: 'pure mathematics the report and run/ share' },
  'src/text': { may: [], why: 'text made safe to show (visible, excerpt, canonical JSON): a leaf' },
  'src/version.ts': { may: [], why: 'the package version: a leaf' },
  'src/lazy.ts': { may: [], why: 'a value built on first use instead of at import (issue 31): a leaf' },
  'src/errors.ts': { may: ['src/text'], why: 'the error classes every layer throws; they show input only through text/' },
  'src/limits.ts': { may: ['src/errors.ts'], why: 'size and time limits every layer shares' },
  'src/input': { may: ['src/errors.ts', 'src/limits.ts', 'src/text', 'src/lazy.ts'], why: 'what the user hands us: files read safely, field types, secrets by reference, the environment facts schema; below config and the providers, which both check input' },

  // ── the machinery a run uses ─────────────────────────────────────────────────────────────────────
  'src/ssh': { may: BASE, why: 'running a command somewhere (this machine, SSH): knows no provider, workload or playbook' },
  'src/results': { may: [...BASE, 'src/stats'], why: 'the normalized record and the stores: stores what it is given and knows no plan, run or report' },
  'src/workloads': { may: [...BASE, 'src/results', 'src/ssh'], why: 'profiles and tools (fio, diskspd) turning a run of a test into records; knows no provider or plan' },
  'src/importers': { may: [...BASE, 'src/results', 'src/workloads'], why: 'tool output files → records, as a run makes them' },

  // ── providers: the registry above the provider folders above the code they share ───────────────
  'src/providers': { may: PROVIDER, why: 'code several providers share (guests, test files, guest disks): knows no provider folder' },
  'src/providers/*': { may: PROVIDER, why: 'a provider knows the contract and the shared provider code, never another provider, the planner, the executor or the CLI' },
  'src/providers/vsphere': {
    may: [...PROVIDER, 'src/providers/hyperv', 'src/providers/esxi-shell'],
    why: "a provider knows the contract and shared provider code; vSphere also reuses Hyper-V's Windows guest calls (PowerShell, guest disks and volumes) and the ESXi shell's VMFS checks",
  },
  'src/providers/index.ts': { may: [...PROVIDER, 'src/providers/*'], why: 'the registry: the one file that lists every provider' },

  // ── the flow: config → plan → run → results → report ────────────────────────────────────────────
  'src/config': {
    may: [...BASE, 'src/workloads', 'src/providers/index.ts', 'src/providers/*'],
    why: 'config parses and checks playbooks and inventories with the schemas the providers own (through the registry; playbook.ts still names hyperv/validate.ts directly); it never plans or runs',
  },
  'src/plan': { may: [...BASE, 'src/config', 'src/workloads', 'src/providers/index.ts'], why: 'the plan is data built from config by the providers\' pure planners: no I/O, nothing of run/, results/ or report/' },
  'src/run': { may: [...BASE, 'src/plan', 'src/results', 'src/workloads', 'src/ssh'], why: 'the executor runs the plan (data) with the providers the CLI hands it; it never reads config or imports a provider, the report or the CLI' },
  'src/report': { may: REPORT, why: 'a report receives records and renders them: it reads no plan, runs nothing and calls no importer' },
  // each renderer renders the model; none imports another (what two say alike: report/wording.ts)
  ...Object.fromEntries(
    ['html', 'markdown', 'csv', 'json'].map((r) => [`src/report/${r}.ts`, { may: [...REPORT, 'src/report'], why: 'a report renderer renders the model and never imports another renderer: shared wording goes to src/report/wording.ts' }]),
  ),

  // ── the top: composition roots ───────────────────────────────────────────────────────────────────
  'src/lab': { may: [...BASE, 'src/providers/vsphere'], why: 'the embedded lab (sshd, vcsim harness, stand-ins) and its own entry point' },
  'src/preflight': { may: [...BASE, 'src/plan', 'src/run', 'src/results', 'src/providers', 'src/ssh', 'src/stats'], why: 'storsweep preflight: asks each target (through its Composition) what the plan will use, runs read-only commands in its guest, runs the canary through the executor, stores the answer; below the CLI and app' },
  'src/app': { may: '*', except: ['src/cli', 'bench', 'test/helpers'], why: 'the use cases (prepare, run, resume, work, report, import) below the CLI: everything but the CLI' },
  'src/cli': { may: '*', except: ['bench', 'test/helpers'], why: 'the only composition root: argv, env, exit codes' },
  bench: { may: '*', why: 'benchmarks measure any layer, with the test helpers' },
  'test/helpers': { may: [], why: 'not checked here (only src/ and bench/ are); a row so that bench/ may use the helpers' },
};

/** The folders whose code the test reads; each folder and .ts file directly inside src/ needs a row. */
export const CHECKED = ['src', 'bench'];
