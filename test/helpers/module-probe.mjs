// Preloaded into a CLI run (`node --import <this> …/storsweep …`) by tests that check what a command
// loads: every module the ES module loader loads (its file: URL, one a line; node: built-ins left
// out) is appended to the file named by STORSWEEP_TEST_MODULES_FILE. A CommonJS package's own
// require()s are not seen, its entry is.
import { register } from 'node:module';

if (process.env.STORSWEEP_TEST_MODULES_FILE) {
  const hooks = `
    import fs from 'node:fs';
    const file = ${JSON.stringify(process.env.STORSWEEP_TEST_MODULES_FILE)};
    export async function load(url, context, next) {
      if (!url.startsWith('node:')) fs.appendFileSync(file, url + '\\n');
      return next(url, context);
    }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
