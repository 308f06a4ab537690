import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterMasterOf, waitUntil, withClient, type Topology } from 'redis-topology';
import { sharedNow } from '../harness/shared-clock.mjs';
import { WorkerProcess, type WorkerMessage } from '../harness/worker-process.js';

/**
 * A critical section of a load worker: its start and end on the machine's shared monotonic clock, its
 * token, and how many other sections were inside at its start by the clock-free inside set (-1: not
 * known, its entry's reply was lost). See load-worker.mjs.
 */
export type Section = [start: number, end: number, token: number, othersInside: number];
export type ErrorRecord = [at: number, code: string];

/** Several processes hammering one lock, so that a failover happens under load. */
export class LockLoad {
  private constructor(readonly workers: WorkerProcess[]) {}

  /** `env` of the workers (NO_LOCK=1: the control, sections without the lock). */
  static async start(env: Record<string, string>, processes = 3, contexts = 3, lockName = 'failover:lock'): Promise<LockLoad> {
    const workers = Array.from({ length: processes }, () => WorkerProcess.start('load-worker.mjs', env, [contexts, lockName, `${lockName}:counter`]));
    await Promise.all(workers.map((worker) => worker.waitForType('ready')));
    return new LockLoad(workers);
  }

  /** Resolves once every worker has completed at least `count` more sections than now. */
  async progress(count: number, timeoutMs = 30_000): Promise<void> {
    const sectionsOf = (worker: WorkerProcess): number => {
      const last = [...worker.messages].reverse().find((m) => m.type === 'progress') as (WorkerMessage & { sections: number }) | undefined;
      return last?.sections ?? 0;
    };
    const targets = this.workers.map((worker) => sectionsOf(worker) + count);
    await Promise.all(
      this.workers.map((worker, i) =>
        worker.waitFor((m) => m.type === 'progress' && (m.sections as number) >= targets[i]!, `${count} more sections`, timeoutMs),
      ),
    );
  }

  async stop(): Promise<{ sections: Section[]; errors: ErrorRecord[] }> {
    for (const worker of this.workers) worker.send('stop');
    const done = await Promise.all(this.workers.map((worker) => worker.waitForType('done', 30_000)));
    return {
      sections: done.flatMap((message) => message.sections as Section[]).sort((a, b) => a[0] - b[0]),
      errors: done.flatMap((message) => message.errors as ErrorRecord[]).sort((a, b) => a[0] - b[0]),
    };
  }
}

export interface FailoverReport {
  mode: string;
  event: string;
  sections: number;
  /** The longest stretch after the fault in which no critical section started: lock operations were failing. */
  windowMs: number;
  errorsByCode: Record<string, number>;
  untypedErrors: string[];
  /** Critical sections that started before an earlier one had ended (on the shared monotonic clock): the lock was granted twice. */
  doubleGrants: number;
  /** Critical sections that found another one inside when they entered (the clock-free check). */
  crowdedSections: number;
  /** Critical sections whose entry into the inside set had no reply (a fault): not checked by it. */
  uncheckedSections: number;
  /** Every error message seen, once (to check for CROSSSLOT and the like). */
  messages: string[];
  /** Errors of the workers' own GET/SET inside the section (plain ioredis, not the lock library). */
  sectionErrors: number;
}

/** The time on the clock the workers' sections are timed with (shared by every process of the machine). */
export const now = sharedNow;

export function analyse(mode: string, event: string, faultAt: number, run: { sections: Section[]; errors: ErrorRecord[] }): FailoverReport {
  let doubleGrants = 0;
  let latestEnd = -Infinity;
  for (const [start, end] of run.sections) {
    if (start < latestEnd) doubleGrants++;
    latestEnd = Math.max(latestEnd, end);
  }
  const starts = [faultAt, ...run.sections.map(([start]) => start).filter((start) => start > faultAt)];
  let windowMs = starts.length > 1 ? 0 : Infinity;
  for (let i = 1; i < starts.length; i++) windowMs = Math.max(windowMs, starts[i]! - starts[i - 1]!);
  const errorsByCode: Record<string, number> = {};
  for (const [, code] of run.errors) {
    const key = /(?:section |unlock )?(LOCK_[A-Z_]+|UNTYPED)/.exec(code)?.[0] ?? code;
    errorsByCode[key] = (errorsByCode[key] ?? 0) + 1;
  }
  return {
    mode,
    event,
    sections: run.sections.length,
    windowMs: Math.round(windowMs),
    errorsByCode,
    untypedErrors: run.errors.map(([, code]) => code).filter((code) => code.includes('UNTYPED') && !code.startsWith('section ')),
    doubleGrants,
    crowdedSections: run.sections.filter((section) => section[3] > 0).length,
    uncheckedSections: run.sections.filter((section) => section[3] < 0).length,
    messages: [...new Set(run.errors.map(([, code]) => code))],
    sectionErrors: run.errors.filter(([, code]) => code.startsWith('section ')).length,
  };
}

/** Keeps the measured figures (results/failover/<mode>.json) for the README table. */
export function record(report: FailoverReport): void {
  const directory = fileURLToPath(new URL('../../results/failover/', import.meta.url));
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, `${report.mode}.json`), `${JSON.stringify(report, null, 2)}\n`);
}

/**
 * A manual CLUSTER FAILOVER of the slot of `failover:lock` under load (3 workers x 3 callers), until
 * the load has made progress on the promoted replica. `env`: the workers' environment (the topology's,
 * plus the client library to use); `started` sees the load before the fault (e.g. to check its client).
 */
export async function manualClusterFailoverUnderLoad(
  topology: Topology,
  env: Record<string, string>,
  mode: string,
  started: (load: LockLoad) => void = () => undefined,
): Promise<FailoverReport> {
  const load = await LockLoad.start(env, 3, 3, 'failover:lock');
  started(load);
  await load.progress(20);
  const slot = Number(await withClient(topology.servers[0]!, (client) => client.call('CLUSTER', 'KEYSLOT', 'lock:{failover:lock}')));
  const promoted = (await clusterMasterOf(topology, slot)).replicas[0]!;
  const faultAt = now();
  await withClient(promoted, (client) => client.call('CLUSTER', 'FAILOVER'));
  await waitUntil(async () => (await clusterMasterOf(topology, slot)).master.port === promoted.port, 'the replica to take over the slot', 30_000);
  await load.progress(20, 30_000);
  return analyse(mode, 'CLUSTER FAILOVER (manual, coordinated)', faultAt, await load.stop());
}
