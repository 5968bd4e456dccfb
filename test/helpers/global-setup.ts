// Runs once before the integration files (vitest globalSetup): builds the vcsim harness a single
// time. Without it, on a new machine every parallel file that starts a simulator runs its own cold
// `go build` of govmomi at once, and the first file's beforeAll timed out waiting for it (seen on
// a new machine under load). A build that fails is left to the files that need the
// simulator: they report it with the install hint (src/lab/vcsim.ts).
import { buildVcsimHarness } from '../../src/lab/vcsim.ts';

export default async function setup(): Promise<void> {
  try {
    await buildVcsimHarness();
  } catch (err) {
    process.stderr.write(`global setup: ${(err as Error).message}\n`);
  }
}
