// A TypeScript entry point (a test's child-process fixture) bundled into one ES module, for tests
// that start many processes of it: through tsx's loader each start compiles every module it imports
// (about a second of CPU; a handful of them took minutes on a machine loaded 9 on 2 cores), the
// bundle starts in a fraction of that. npm packages are not bundled: the bundle imports them from
// their place in node_modules by absolute path, so it may live in the test's temp directory.
//
//   const taker = await bundleEntry(fileURLToPath(new URL('./fixtures/taker.ts', import.meta.url)), dir);
//   spawn(process.execPath, [taker, ...args]);
import { createRequire } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);

/** `entry` bundled into `outDir`/<its name>.mjs; resolves to that file. */
export async function bundleEntry(entry: string, outDir: string): Promise<string> {
  const outfile = path.join(outDir, `${path.basename(entry, path.extname(entry))}.mjs`);
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    plugins: [
      {
        name: 'packages-by-absolute-path',
        setup(b) {
          // a bare specifier: Node's own module, or a package from node_modules (not bundled)
          b.onResolve({ filter: /^[^./]/ }, (a) => ({ path: a.path.startsWith('node:') ? a.path : require.resolve(a.path, { paths: [a.resolveDir] }), external: true }));
        },
      },
    ],
  });
  return outfile;
}
