#!/usr/bin/env node
// Runs a TypeScript entry point through tsx's loader, so no build step stands between a
// source edit and the CLI (tests spawn the CLI as users do).
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

register();
const entry = process.argv[2];
if (!entry) {
  console.error('usage: run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
process.argv.splice(1, 2, path.resolve(entry));
await import(pathToFileURL(path.resolve(entry)).href);
