#!/usr/bin/env node
// The CLI: from a bundle of src/ that is up to date with every file it was built from (built
// first when it is not: bin/cli-bundle.mjs), else src/ through tsx's loader as before.
import { freshBundle } from './cli-bundle.mjs';

const bundle = await freshBundle('src/cli/main.ts');
if (bundle) {
  await import(bundle);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
