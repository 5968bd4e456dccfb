import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Layers (docs/architecture.md): config → plan → run → results → report, the CLI on top, providers
// beside run, src/contract/ a leaf of shared types. Each entry: the files, the src/ folders they must
// not import from, and why. Matched on the import specifier (`../run/x.ts`, `../../run/x.ts`) by
// no-restricted-imports (static imports, `export … from`) and no-restricted-syntax (import(),
// new URL('…', import.meta.url)). Nothing under src/ imports from test/.
const LAYERS = [
  { files: ['src/plan/**/*.ts'], forbid: ['run', 'results', 'report', 'cli'], why: 'plan/ builds data from config; what run/ and results/ share with it lives in src/contract/' },
  { files: ['src/results/**/*.ts'], forbid: ['plan', 'run', 'report', 'cli'], why: 'results/ stores what it is given; the plan\'s shape lives in src/contract/plan.ts' },
  { files: ['src/report/**/*.ts'], forbid: ['plan', 'run', 'cli', 'providers'], why: 'report/ reads result records only' },
  { files: ['src/providers/**/*.ts'], forbid: ['cli', 'run', 'plan', 'report'], why: 'a provider knows the contract (src/contract/), never the executor or the CLI' },
  { files: ['src/contract/**/*.ts'], forbid: ['cli', 'run', 'plan', 'results', 'report', 'providers', 'config'], why: 'src/contract/ is a leaf every layer may import' },
  { files: ['src/run/**/*.ts'], forbid: ['cli', 'app', 'report'], why: 'run/ is driven by the CLI, never the reverse' },
  { files: ['src/app/**/*.ts'], forbid: ['cli'], why: 'src/app/ holds the use cases a command calls; it never imports the CLI' },
  { files: ['src/stats/**/*.ts'], forbid: ['cli', 'run', 'plan', 'results', 'report', 'providers', 'config', 'contract', 'workloads'], why: 'src/stats/ is pure mathematics every layer may use' },
  { files: ['src/**/*.ts'], forbid: [], why: '' },
];
/** Report renderers share wording through src/report/wording.ts, never through each other. */
const RENDERERS = ['html', 'markdown', 'csv', 'json'];

const TEST_TREE = { regex: '^(\\.\\./)+test/', message: 'nothing under src/ imports from test/: move what both need into src/ (e.g. src/lab/harness/)' };

function layerRules({ forbid, why }, extra = []) {
  const patterns = [TEST_TREE, ...extra, ...forbid.map((dir) => ({ regex: `^(\\.\\./)+${dir}/`, message: `layering: ${why}` }))];
  const selectors = patterns.flatMap(({ regex, message }) => [
    { selector: `ImportExpression > Literal[value=/${regex.replaceAll('/', '\\/')}/]`, message },
    { selector: `NewExpression[callee.name='URL'] > Literal[value=/${regex.replaceAll('/', '\\/')}/]`, message },
  ]);
  return { 'no-restricted-imports': ['error', { patterns }], 'no-restricted-syntax': ['error', ...selectors] };
}

// A later config object's options for a rule replace an earlier one's, so the file sets do not
// overlap (each layer ignores the ones listed before it) and a renderer's set repeats report/'s rules.
const REPORT = LAYERS.find((l) => l.files[0] === 'src/report/**/*.ts');
const layerConfigs = [
  ...LAYERS.map((l, i) => ({ files: l.files, ignores: LAYERS.slice(0, i).flatMap((x) => x.files), rules: layerRules(l) })),
  ...RENDERERS.map((r) => ({
    files: [`src/report/${r}.ts`],
    rules: layerRules(REPORT, [
      { regex: `^\\./(${RENDERERS.filter((x) => x !== r).join('|')})(\\.ts)?$`, message: 'report renderers do not import each other: shared wording goes to src/report/wording.ts' },
    ]),
  })),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'runs/**', '.lab/**', 'dist/**', '.build/**', 'src/lab/harness/vcsim/*.go', 'coverage/**'] },
  js.configs.recommended,
  // Type-aware: floating/misused promises, awaiting non-promises, `any` leaking out of JSON.parse,
  // "[object Object]" in messages. One program for the whole repo (tsconfig.json's include).
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // An `async` function without `await` is deliberate here: a synchronous throw becomes a
      // rejection, and interface methods (Provider.apply/destroy/find) keep one shape.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      'no-console': 'off',
    },
  },
  {
    // Vitest's asymmetric matchers (expect.any, expect.stringContaining…) are typed `any`, and tests
    // read JSON they assert on: the no-unsafe-* family would flag every such line in test files.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Nothing from input reaches a terminal raw: the CLI prints only through src/cli/output.ts,
    // which makes control characters visible (src/text/visible.ts). The lab has its own entry point.
    // src/app/notify.ts: a use case's notes before the CLI set its sink, made visible the same way.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/output.ts', 'src/app/notify.ts', 'src/lab/**'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'stdout', message: 'print through src/cli/output.ts (terminal-safe)' },
        { object: 'process', property: 'stderr', message: 'print through src/cli/output.ts (terminal-safe)' },
      ],
    },
  },
  ...layerConfigs,
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
  },
);
