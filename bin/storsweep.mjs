#!/usr/bin/env node
// The CLI: from a bundle of src/ that is up to date with every file it was built from (built
// first when it is not: bin/cli-bundle.mjs; its stacks name src/ through the source map), else src/
// through tsx's loader as before.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freshBundle, mapStackTraces } from './cli-bundle.mjs';

async function viaTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}

const bundle = await freshBundle('src/cli/main.ts');
if (!bundle) {
  await viaTsx();
} else {
  mapStackTraces(bundle);
  try {
    await import(bundle);
  } catch (err) {
    // removed by a build of another process since it was found fresh (an hour-old bundle): the
    // sources, as before — only when the bundle itself could not be found, so nothing of it ran. A
    // command that ran and failed is never run a second time (a long one outlives its bundle).
    const missing = err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(fileURLToPath(bundle));
    if (!missing || fs.existsSync(fileURLToPath(bundle))) throw err;
    await viaTsx();
  }
}
