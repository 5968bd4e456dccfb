import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'runs/**', '.lab/**', 'dist/**', 'src/lab/harness/vcsim/*.go', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
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
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
);
