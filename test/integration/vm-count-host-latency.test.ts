// vm.count's host-side latency on the lab (issue 32): each member record carries the host counters
// of ITS OWN clone's disk under test (virtualDisk.*, the clone's VM, its scsi bus:unit), over its
// own scored passes; the aggregate carries the shared datastore's (datastore.*, summed over the
// VMs); the report's scaling section sets guest and host latency side by side per VM count.
// Asserted from outside our code: pyvmomi reads each kept clone's disk and its counter instance,
// and the harness's call log says whose counters were asked for (QueryPerf per VM).
//
// THE SERIES ARE SYNTHETIC (the simulator's cyclic values, perf.go): this proves which counters of
// which VM and disk land in which record, never that the numbers mean anything.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TOOLS_LINUX_VM } from '../../src/lab/lab.ts';
import type { HostMetrics, ResultRecord } from '../../src/results/record.ts';
import { formatLatency } from '../../src/report/numbers.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { runLabPlaybook, useEmbeddedLab } from '../helpers/embedded-lab.ts';
import { probe, type ProbeEndpoint } from '../helpers/pyvmomi-probe.ts';

const lab = useEmbeddedLab('ss-vmhost-', { vcsim: true });

const endpoint = (): Promise<ProbeEndpoint> => lab.endpoint();
const clonesNow = async (): Promise<string[]> => {
  const [about] = await probe(await endpoint(), [{ op: 'about' }]);
  return (about!.vms as string[]).filter((v) => v.startsWith('ss-'));
};

type DiskInstance = { fileName: string | null; uuid: string | null; instance: string | null };

describe('vm.count [1, 2] on the lab: host counters per VM and for the pass', () => {
  let code: number | null;
  let out: string;
  let runDir: string;
  let recs: ResultRecord[];
  /** the clones of the last permutation (kept by --keep), each disk as pyvmomi reads it */
  const kept = new Map<string, DiskInstance[]>();
  /** VMs whose counters the run asked for (harness call log) */
  let perfAskedOf: string[];
  let cleanupCode: number | null;
  let clonesAfter: string[];

  beforeAll(async () => {
    await lab.control.reset();
    const text = (await fs.readFile(path.join(REPO_ROOT, 'playbooks', 'vm-scaling.yaml'), 'utf8')).replace('count: [1, 2, 4]', 'count: [1, 2]');
    expect(text).toContain('count: [1, 2]');
    const file = path.join(lab.root, 'vm-host.yaml');
    await fs.writeFile(file, text);
    const r = await runLabPlaybook<ResultRecord>(lab.root, file, { extra: ['--keep'], timeoutMs: 600_000 });
    code = r.cli.code;
    out = r.cli.stdout + r.cli.stderr;
    runDir = r.runDir;
    recs = r.records;
    perfAskedOf = (await lab.control.log()).filter((c) => c.method === 'QueryPerf').map((c) => c.vm ?? '');
    const clones = await clonesNow();
    const read = await probe(await endpoint(), clones.map((vm) => ({ op: 'vm-disk-instances', vm })));
    clones.forEach((vm, i) => kept.set(vm, read[i]!.disks as DiskInstance[]));
    const cl = await runCli(['cleanup', runDir], { cwd: lab.root, timeoutMs: 300_000 });
    cleanupCode = cl.code;
    clonesAfter = await clonesNow();
  }, 900_000);

  const members = () => recs.filter((r) => r.vm?.role === 'member');
  const aggregates = () => recs.filter((r) => r.vm?.role === 'aggregate');
  const hostOf = (r: ResultRecord): HostMetrics => {
    expect(r.host, `${r.vm?.role} ${r.vm?.name ?? ''}: ${JSON.stringify(r.host)}`).toBeDefined();
    expect('unavailable' in r.host!, JSON.stringify(r.host)).toBe(false);
    return r.host as HostMetrics;
  };

  it('runs, keeps the 2-VM permutation\'s clones for inspection, and cleanup removes them (pyvmomi)', () => {
    expect(code, out).toBe(0);
    expect(kept.size).toBe(2);
    expect(cleanupCode).toBe(0);
    expect(clonesAfter).toEqual([]);
  });

  it('gives each member record the counters of its own clone\'s disk under test, over its own scored passes', () => {
    expect(members()).toHaveLength(1 + 2);
    for (const m of members()) {
      const h = hostOf(m);
      expect(h.source).toBe('vsphere-perf');
      // whose counters: the member's own clone, never the template
      expect(h.entity).toBe(m.vm!.name);
      expect(h.entity).not.toBe(TOOLS_LINUX_VM);
      expect(h.window).toBe('scored-passes');
      expect(h.virtualDisk?.instance).toMatch(/^scsi\d+:\d+$/);
      expect(h.virtualDisk?.readIops).toBeGreaterThan(0);
      expect(h.latencyUs).toEqual(expect.any(Number));
      expect(h.latencySpan).toMatch(/^virtualDisk\./);
      // the VM's own pass window lies inside what the host watched (the host's clock and the guest's are this machine's)
      expect(Date.parse(h.from)).toBeLessThanOrEqual(Date.parse(m.vm!.startedAt!));
      expect(Date.parse(h.to)).toBeGreaterThanOrEqual(Date.parse(m.vm!.endedAt!) - 1000);
    }
    // two VMs of one pass: two entities
    expect(new Set(members().filter((m) => m.vm!.count === 2).map((m) => hostOf(m).entity)).size).toBe(2);
  });

  it('names the instance pyvmomi gives the disk the member measured in that clone', () => {
    for (const m of members().filter((r) => r.vm!.count === 2)) {
      const disks = kept.get(m.vm!.name!);
      expect(disks, `${m.vm!.name} was not kept`).toBeDefined();
      // the measured disk: the one whose backing uuid (without dashes) is the WWN the guest found it by
      const wwn = String(m.metadata?.['deviceWwn'] ?? '').toLowerCase();
      const measured = disks!.filter((d) => d.uuid !== null && d.uuid.replace(/-/g, '').toLowerCase() === wwn);
      expect(measured, `${m.vm!.name}: no disk of uuid ${wwn} among ${JSON.stringify(disks)}`).toHaveLength(1);
      expect(hostOf(m).virtualDisk!.instance).toBe(measured[0]!.instance);
    }
  });

  it('asks the host for the counters of every clone, by that clone (harness call log)', () => {
    const clones = [...new Set(members().map((m) => m.vm!.name!))];
    expect(clones).toHaveLength(3);
    for (const vm of clones) expect(perfAskedOf, vm).toContain(vm);
    expect(perfAskedOf).not.toContain(TOOLS_LINUX_VM);
  });

  it('gives the aggregate the shared datastore\'s counters, summed over the pass\'s VMs, and says which span they cover', () => {
    expect(aggregates()).toHaveLength(2);
    for (const a of aggregates()) {
      const h = hostOf(a);
      const own = members().filter((m) => m.vm!.count === a.vm!.count).map(hostOf);
      expect(h.virtualDisk).toBeUndefined();
      expect(h.entity).toBeUndefined();
      expect(h.latencySpan).toMatch(/^datastore\.totalReadLatency/);
      expect(h.datastore?.instance).toBe(own[0]!.datastore!.instance);
      expect(h.datastore?.readIops).toBeCloseTo(own.reduce((s, m) => s + m.datastore!.readIops!, 0), 6);
      expect(h.latencyUs).toBeCloseTo(h.datastore!.latencyMs! * 1000, 6);
      expect(h.from).toBe(own.map((m) => m.from).sort()[0]);
    }
  });

  it('shows guest and host latency per VM count in the report\'s scaling section', async () => {
    const md = await fs.readFile(path.join(runDir, 'report.md'), 'utf8');
    const at = md.indexOf('## Scaling with VM count');
    expect(at).toBeGreaterThanOrEqual(0);
    const section = md.slice(at, md.indexOf('\n## ', at + 1));
    const lines = section.split('\n');
    const header = lines.find((l) => l.startsWith('| VMs'))!;
    const cols = header.split('|').map((c) => c.trim());
    const vdisk = cols.indexOf('host lat, one VM\'s disk (mean; min – max)');
    const ds = cols.indexOf('host lat, datastore');
    expect(vdisk, header).toBeGreaterThan(0);
    expect(ds, header).toBeGreaterThan(0);
    for (const n of [1, 2]) {
      const row = lines.find((l) => l.startsWith(`| ${n} |`))!.split('|').map((c) => c.trim());
      const own = members().filter((m) => m.vm!.count === n).map((m) => hostOf(m).latencyUs!);
      const agg = hostOf(aggregates().find((a) => a.vm!.count === n)!);
      expect(row[vdisk]).toContain(formatLatency(own.reduce((s, x) => s + x, 0) / own.length));
      expect(row[ds]).toBe(formatLatency(agg.latencyUs));
    }
    expect(section).toMatch(/host lat, one VM's disk: virtualDisk\./);
    expect(section).toMatch(/host lat, datastore: datastore\./);
    // the HTML report's scaling section: the same columns
    const html = await fs.readFile(path.join(runDir, 'report.html'), 'utf8');
    const from = html.indexOf('<section id="vm-scaling">');
    expect(from).toBeGreaterThanOrEqual(0);
    const scaling = html.slice(from, html.indexOf('</section>', from));
    expect(scaling).toContain('<th>host lat, datastore</th>');
    expect(scaling).toContain('host lat, one VM&#39;s disk (mean; min – max)');
  });
});
