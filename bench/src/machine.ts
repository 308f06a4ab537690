import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  /** The server(s) measured, with their product: 'Redis 7.0.15', 'Redis 7.0.15, Valkey 9.1.2'. */
  redis: string;
  loadAverageAtStart: number[];
  /** Share of CPU time the hypervisor took from this VM during the run (from /proc/stat), if known. */
  stealPercent?: number;
}

interface CpuTimes {
  total: number;
  steal: number;
}

/** Aggregate CPU counters from /proc/stat (Linux), for the steal share over the run. */
export function cpuTimes(): CpuTimes | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('cpu '));
    const fields = line!.trim().split(/\s+/).slice(1).map(Number);
    return { total: fields.reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

export function stealPercent(from: CpuTimes | undefined, to: CpuTimes | undefined): number | undefined {
  if (!from || !to || to.total <= from.total) return undefined;
  return ((to.steal - from.steal) / (to.total - from.total)) * 100;
}

export function machineInfo(redisVersion: string): MachineInfo {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()}`,
    node: process.version,
    redis: redisVersion,
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

export function describeMachine(machine: MachineInfo): string {
  const steal = machine.stealPercent === undefined ? '' : `, ${machine.stealPercent.toFixed(1)} % CPU steal during the run`;
  return `${machine.cores} x ${machine.cpu}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}, ${machine.redis}; load average at start ${machine.loadAverageAtStart.join(' / ')}${steal}`;
}
