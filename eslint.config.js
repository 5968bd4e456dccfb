import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Which folder (or file) may import which is one table, test/architecture/layers.ts, checked with
// cycle detection by test/unit/architecture/import-graph.test.ts. Lint keeps only what that table
// cannot say: nothing under src/ names a file under test/ through `new URL('…', import.meta.url)`
// (an import of test/ is the table's to refuse).
const TEST_TREE_URL = {
  selector: "NewExpression[callee.name='URL'] > Literal[value=/^(\\.\\.\\/)+test\\//]",
  message: 'nothing under src/ imports from test/: move what both need into src/ (e.g. src/lab/harness/)',
};

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
    files: ['src/**/*.ts'],
    ignores: ['src/cli/output.ts', 'src/lab/**'],
    rules: {
      'no-console': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'stdout', message: 'print through src/cli/output.ts (terminal-safe)' },
        { object: 'process', property: 'stderr', message: 'print through src/cli/output.ts (terminal-safe)' },
      ],
    },
  },
  { files: ['src/**/*.ts'], rules: { 'no-restricted-syntax': ['error', TEST_TREE_URL] } },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
  },
);
