// The package as a user gets it: `npm pack` of the checkout (its prepack builds dist/), then that
// tarball installed into a temporary prefix with npm. Dependencies come from npm's cache where it
// has them (--prefer-offline); their install scripts are skipped (--ignore-scripts: no native build
// of better-sqlite3 or cpu-features, minutes on this machine) — what is run from the install must
// not need them, and the lazy imports see to it that --version, validate, profiles and completion
// do not load them.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './cli.ts';

export interface InstalledPackage {
  /** the tarball `npm pack` wrote */
  tarball: string;
  /** the files the tarball holds (package-relative paths) */
  files: string[];
  /** <prefix>/node_modules/storsweep */
  packageDir: string;
  /** <prefix>/node_modules/.bin/storsweep: the command npm installed */
  bin: string;
}

function npm(args: readonly string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('npm', [...args], { cwd, timeout: timeoutMs, maxBuffer: 64 << 20, env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`npm ${args.join(' ')} failed: ${err.message}\n${stderr}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

/**
 * better-sqlite3's native module, which its skipped install script would have built (node-gyp, when
 * no prebuilt binary is reachable): the checkout's own build of the very same version, copied in.
 * A different version gets none (a command that opens a run.sqlite then fails, saying so).
 */
function useCheckoutBinding(installed: string): void {
  const checkout = path.join(REPO_ROOT, 'node_modules', 'better-sqlite3');
  const version = (d: string) => (JSON.parse(fs.readFileSync(path.join(d, 'package.json'), 'utf8')) as { version: string }).version;
  const built = path.join(checkout, 'build', 'Release', 'better_sqlite3.node');
  if (!fs.existsSync(built) || version(checkout) !== version(installed)) return;
  fs.mkdirSync(path.join(installed, 'build', 'Release'), { recursive: true });
  fs.copyFileSync(built, path.join(installed, 'build', 'Release', 'better_sqlite3.node'));
}

/** Packs the checkout into `dir` and installs the tarball into `dir`/prefix. */
export async function packAndInstall(dir: string): Promise<InstalledPackage> {
  const out = await npm(['pack', '--json', '--pack-destination', dir], REPO_ROOT, 600_000);
  // the JSON array, after whatever the prepack script printed on stdout
  const packed = JSON.parse(out.slice(Math.max(0, out.search(/^\[/m)))) as { filename: string; files: { path: string }[] }[];
  const tarball = path.join(dir, packed[0]!.filename);
  const prefix = path.join(dir, 'prefix');
  fs.mkdirSync(prefix, { recursive: true });
  await npm(['install', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-save', tarball], dir, 600_000);
  useCheckoutBinding(path.join(prefix, 'node_modules', 'better-sqlite3'));
  return {
    tarball,
    files: packed[0]!.files.map((f) => f.path),
    packageDir: path.join(prefix, 'node_modules', 'storsweep'),
    bin: path.join(prefix, 'node_modules', '.bin', 'storsweep'),
  };
}
