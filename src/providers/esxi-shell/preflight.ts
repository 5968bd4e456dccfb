// What `storsweep preflight` asks of an ESXi host over SSH (contract/preflight.ts): the room on each
// LUN the plan formats and datastore it fills, and read-only checks of the shell (host key, login,
// release, the tools the steps run, esxtop for host metrics). Nothing here changes the host.
import type { PreflightCheck, SpaceHave, SpacePlace, TargetPreflight } from '../../contract/preflight.ts';
import { errorMessage } from '../../errors.ts';
import type { CommandRunner } from '../../ssh/command-runner.ts';
import { withFreshSession } from '../fresh-session.ts';
import { shJoin } from '../../ssh/quote.ts';
import { parseEsxiVersion, formatEsxiVersion } from '../esxi-version.ts';
import { deviceListArgv } from './esxcli.ts';
import { getptblArgv, parseGetptbl } from './partedutil.ts';
import { hostVersionArgv, parseVmwareVersion } from './version.ts';
import { esxiSpaceNeeds } from './space-needs.ts';

export { esxiSpaceNeeds };

const GiB = 1024 ** 3;

/**
 * What a new VMFS keeps for itself on a LUN: its partition starts 1 MiB in, and the volume's metadata
 * (resource files, journal, heartbeat region) takes a few hundred MB (the lab's vCenter simulator
 * counts 700 MiB; the exact size on a real host depends on the version and is unverified). VMware
 * also asks that ~200 MB stay free on every VMFS (Broadcom KB 318856, "Troubleshooting ESXi
 * datastore or VMFS volume full"). One GiB covers both.
 */
export const VMFS_RESERVE_BYTES = GiB;

/** `vmkfstools -P`: "Capacity N (B file blocks * S), F (G blocks) avail" — the free bytes. */
export function parseAvail(text: string): number | null {
  const m = /^Capacity \d+ \(\d+ file blocks \* \d+\), (\d+) \(\d+ blocks\) avail/m.exec(text);
  return m ? Number(m[1]) : null;
}

async function spaceOfPlace(runner: CommandRunner, place: SpacePlace): Promise<SpaceHave> {
  if (place.kind === 'lun') {
    // partedUtil getptbl's second line: "<cylinders> <heads> <sectors> <total sectors>", 512-byte
    // sectors (KB 1036609; a 4Kn device shows the host 512e); read-only, as each permutation reads it
    const r = await runner.run(shJoin(getptblArgv(place.device)));
    if (r.exitCode !== 0) return { place, bytes: null, detail: `partedUtil getptbl ${place.device} failed: ${r.stderr.trim().split('\n').pop() ?? ''}` };
    const size = parseGetptbl(r.stdout).totalSectors * 512;
    return { place, bytes: size - VMFS_RESERVE_BYTES, detail: `LUN ${place.device} is ${(size / GiB).toFixed(1)} GiB (partedUtil getptbl), less 1 GiB the new VMFS keeps` };
  }
  if (place.kind !== 'datastore') return { place, bytes: null, detail: `an ESXi host has no ${place.kind} place` };
  const r = await runner.run(shJoin(['vmkfstools', '-P', `/vmfs/volumes/${place.name}`]));
  const free = r.exitCode === 0 ? parseAvail(r.stdout) : null;
  if (free === null) return { place, bytes: null, detail: `vmkfstools -P /vmfs/volumes/${place.name} gave no free space: ${(r.stderr || r.stdout).trim().split('\n').pop() ?? ''}` };
  return { place, bytes: free, detail: `datastore ${place.name} has ${(free / GiB).toFixed(1)} GiB free (vmkfstools -P)` };
}

/** A tool the steps run is there and answers (exit code and last line when not). */
async function toolCheck(runner: CommandRunner, name: string, argv: string[], remedy: string): Promise<PreflightCheck> {
  const r = await runner.run(shJoin(argv)).catch((err: unknown) => ({ exitCode: -1, stdout: '', stderr: errorMessage(err) }));
  if (r.exitCode === 0) return { check: `command ${name}`, status: 'ok', detail: `${argv.join(' ')} runs` };
  return { check: `command ${name}`, status: 'fail', detail: `${argv.join(' ')} exited ${r.exitCode}: ${(r.stderr || r.stdout).trim().split('\n').pop() ?? ''}`, remedy };
}

async function shellChecks(runner: CommandRunner, o: { host: string; version?: string; vmid: string; devices: string[] }): Promise<PreflightCheck[]> {
  const out: PreflightCheck[] = [{ check: 'connection', status: 'ok', detail: `${runner.target}: SSH host key verified (known_hosts), logged in` }];
  const v = await runner.run(shJoin(hostVersionArgv()));
  if (v.exitCode !== 0) out.push({ check: 'version', status: 'fail', detail: `vmware -v exited ${v.exitCode}`, remedy: 'the SSH host must be an ESXi shell' });
  else {
    const found = parseVmwareVersion(v.stdout, `${o.host}: vmware -v`);
    const stated = o.version ? parseEsxiVersion(o.version) : undefined;
    const got = parseEsxiVersion(found);
    const same = !stated || (got && formatEsxiVersion(got) === formatEsxiVersion(stated));
    out.push(same ? { check: 'version', status: 'ok', detail: `ESXi ${found}${o.version ? ` (inventory: ${o.version})` : ''}` } : { check: 'version', status: 'fail', detail: `the host runs ESXi ${found}, the inventory says ${o.version ?? ''}`, remedy: `set version: "${got ? formatEsxiVersion(got) : found}" in the target` });
  }
  for (const d of o.devices) out.push(await toolCheck(runner, 'esxcli', deviceListArgv(d), `the device ${d} must be visible to the host`));
  out.push(await toolCheck(runner, 'vim-cmd', ['vim-cmd', 'vmsvc/device.getdevices', o.vmid], `vmid ${o.vmid} must be a VM on this host (vim-cmd vmsvc/getallvms)`));
  for (const tool of ['vmkfstools', 'partedUtil']) {
    const r = await runner.run(`command -v ${tool}`).catch(() => ({ exitCode: 1 }));
    out.push(r.exitCode === 0 ? { check: `command ${tool}`, status: 'ok', detail: `${tool} present` } : { check: `command ${tool}`, status: 'fail', detail: `${tool} not found on the host's PATH`, remedy: 'the SSH host must be an ESXi shell' });
  }
  const top = await runner.run('command -v esxtop').catch(() => ({ exitCode: 1 }));
  out.push(top.exitCode === 0 ? { check: 'host metrics', status: 'ok', detail: 'esxtop present (host-side device latency in batch mode)' } : { check: 'host metrics', status: 'warn', detail: 'esxtop not found: no host-side latency', remedy: 'run on a host shell that has esxtop, or read host metrics through vCenter' });
  return out;
}

/** The ESXi shell target's preflight; `connect` opens a fresh SSH session (closed after each use). */
export function esxiShellPreflight(connect: () => Promise<CommandRunner>, o: { host: string; version?: string; vmid: string; devices: string[] }): TargetPreflight {
  const withRunner = <X>(fn: (r: CommandRunner) => Promise<X>): Promise<X> => withFreshSession(connect, fn);
  return {
    spaceNeeds: esxiSpaceNeeds,
    spaceOf: (places) => withRunner(async (r) => Promise.all(places.map((p) => spaceOfPlace(r, p)))),
    checks: () => withRunner((r) => shellChecks(r, o)),
  };
}
