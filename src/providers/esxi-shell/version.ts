// `vmware -v`: the ESXi release, one line "VMware ESXi 6.7.0 build-8169922" (read-only). The run
// asks it when the inventory states no `version`, before anything is changed on the host.
import { ParseError } from '../../errors.ts';

export const hostVersionArgv = (): string[] => ['vmware', '-v'];

/** "VMware ESXi 8.0.3 build-24022510" → "8.0.3" */
export function parseVmwareVersion(text: string, source = 'vmware -v'): string {
  const m = /VMware ESXi (\d+\.\d+(?:\.\d+)?)/.exec(text);
  if (!m) throw new ParseError(`${source}: expected "VMware ESXi <version> build-<n>", got ${JSON.stringify(text.trim().slice(0, 200))}`, { source, expected: 'VMware ESXi <version> build-<n>' });
  return m[1]!;
}
