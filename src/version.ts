// storsweep's version, from its one source: package.json (`--version`, the run's fingerprint).
import fs from 'node:fs';

export const VERSION: string = (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
