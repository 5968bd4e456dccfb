// Preloaded into a CLI run (`node --import <this> …/storsweep …`) by tests that check what a command
// loads: every module the ES module loader loads (its file: URL, one a line; node: built-ins left
// out) is appended to the file named by STORSWEEP_TEST_MODULES_FILE, and at exit every CommonJS
// module in require's cache too (a package's own require()s, and one required on first use:
// src/input/xml-parser.ts), as file: URLs. A line may come twice.
import fs from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const file = process.env.STORSWEEP_TEST_MODULES_FILE;
if (file) {
  const hooks = `
    import fs from 'node:fs';
    const file = ${JSON.stringify(file)};
    export async function load(url, context, next) {
      if (!url.startsWith('node:')) fs.appendFileSync(file, url + '\\n');
      return next(url, context);
    }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
  const { cache } = createRequire(import.meta.url);
  process.on('exit', () => {
    const required = Object.keys(cache).filter((p) => p.startsWith('/')).map((p) => pathToFileURL(p).href);
    if (required.length) fs.appendFileSync(file, required.join('\n') + '\n');
  });
}
