// What the figures were measured on: they mean little without it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  ramGiB: number;
  node: string;
  fio: string;
  os: string;
  date: string;
  /** 1, 5 and 15 minute load averages when the benchmark ended (the machine is shared) */
  loadAvg?: number[];
}

function tryRun(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'not installed';
  }
}

function cpuModel(): string {
  // /proc/cpuinfo names the model where os.cpus() sometimes has only "unknown" in VMs.
  const m = /^model name\s*:\s*(.+)$/m.exec(fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '');
  return m?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
}

export function machineInfo(): MachineInfo {
  return {
    nproc: Number(tryRun('nproc', [])) || os.availableParallelism(),
    cpuModel: cpuModel(),
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    fio: tryRun('fio', ['--version']),
    os: `${os.type()} ${os.release()}`,
    date: new Date().toISOString(),
    loadAvg: os.loadavg().map((x) => Math.round(x * 10) / 10),
  };
}
