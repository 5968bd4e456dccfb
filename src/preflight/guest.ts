// The guest's part of a preflight: reachable the way the run reaches it (SSH, this machine, VMware
// Tools guest operations), the benchmark tool there with its version, `sudo -n` where the guest
// uses it, room for a file test's file (guest-needs.ts), and its clock.
import type { PreflightCheck } from '../contract/preflight.ts';
import type { WorkloadEndpoint } from '../contract/provider.ts';
import { errorMessage } from '../errors.ts';
import { roomCheck, sudoCheck } from './guest-needs.ts';

/** Read-only checks of where a target's workload runs; `fileBytes`: the largest test file its permutations write. */
export async function guestChecks(workload: WorkloadEndpoint, o: { fileBytes?: number } = {}): Promise<PreflightCheck[]> {
  let runner;
  try {
    runner = await workload.connect();
  } catch (err) {
    return [{ check: 'guest reachable', status: 'fail', detail: errorMessage(err), remedy: 'start the guest (and its VMware Tools, for a guest reached through them), check its address, key and credentials' }];
  }
  const out: PreflightCheck[] = [{ check: 'guest reachable', status: 'ok', detail: runner.target }];
  try {
    const none: Record<string, string> = {};
    const facts: Record<string, string> = workload.describe ? await workload.describe(runner).catch(() => none) : none;
    const tool = (facts['guest.tool'] ?? '').trim();
    const known = workload.tool === 'fio' ? /^fio-\d/.test(tool) : tool !== '';
    out.push(known ? { check: `guest ${workload.tool}`, status: 'ok', detail: `${tool}${facts['guest.os'] ? ` on ${facts['guest.os']}` : ''}` } : { check: `guest ${workload.tool}`, status: 'fail', detail: `${workload.tool} did not answer${tool ? ` (it printed ${JSON.stringify(tool.slice(0, 80))})` : ''}`, remedy: `install ${workload.tool} in the guest, or set the target's ${workload.tool}Path` });
    const needs = workload.guestNeeds ?? {};
    if (needs.sudo) out.push(await sudoCheck(runner));
    if (needs.testFile && o.fileBytes) out.push(await roomCheck(runner, needs.testFile, o.fileBytes));
    if (workload.tool === 'fio') out.push(await clockCheck(runner));
  } finally {
    await runner.close().catch(() => undefined);
  }
  return out;
}

/** The guest's clock against this machine's (`date +%s.%N`, the midpoint of the call). */
async function clockCheck(runner: { run(c: string): Promise<{ stdout: string; exitCode: number }> }): Promise<PreflightCheck> {
  const before = Date.now();
  const r = await runner.run('date +%s.%N').catch(() => ({ stdout: '', exitCode: 1 }));
  const mid = (before + Date.now()) / 2;
  const t = Number(r.stdout.trim()) * 1000;
  if (r.exitCode !== 0 || !Number.isFinite(t) || t === 0) return { check: 'guest clock', status: 'warn', detail: 'date +%s.%N gave no time', remedy: 'check the guest clock by hand' };
  const offset = t - mid;
  const far = Math.abs(offset) > 5000;
  return { check: 'guest clock', status: far ? 'warn' : 'ok', detail: `${offset >= 0 ? '+' : ''}${(offset / 1000).toFixed(1)} s from this machine's`, ...(far ? { remedy: 'set the clocks by NTP: host-metric windows are matched to the guest\u2019s test times' } : {}) };
}
