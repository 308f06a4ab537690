import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { CouldNotRun, type RedisTarget } from '../adapters/adapter.js';
import { percentile } from '../stats.js';
import type { FromWorker, Section, ToWorker } from './contended-protocol.js';
import type { RunOutcome } from './scenario.js';

const WORKER = fileURLToPath(new URL('./contended-worker.js', import.meta.url));
/** A worker that has not reported this long after its run was cut is declared stuck. */
const GRACE_MS = 120_000;

interface Worker {
  child: ChildProcess;
  inbox: FromWorker[];
  waiting: ((message: FromWorker) => void) | undefined;
  log: string[];
}

/**
 * The processes of the contended scenario, started once and reused by every library and round, so
 * that start-up costs are not part of any run.
 */
export class ContendedPool {
  private workers: Worker[] = [];

  constructor(private readonly size: number) {}

  start(): void {
    this.workers = Array.from({ length: this.size }, () => {
      // BENCH_WORKER_NODE_OPTIONS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the workers.
      const execArgv = process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
      const child = fork(WORKER, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv });
      const worker: Worker = { child, inbox: [], waiting: undefined, log: [] };
      const keep = (chunk: Buffer): void => {
        worker.log.push(chunk.toString());
        if (worker.log.length > 50) worker.log.shift();
      };
      child.stdout!.on('data', keep);
      child.stderr!.on('data', keep);
      child.on('error', (error) => keep(Buffer.from(`worker process error: ${error.message}\n`)));
      child.on('message', (message: FromWorker) => {
        const waiting = worker.waiting;
        worker.waiting = undefined;
        if (waiting) waiting(message);
        else worker.inbox.push(message);
      });
      return worker;
    });
  }

  /** Stops every worker (politely, then SIGKILL after 3 s). */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            const { child } = worker;
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            if (child.connected) child.send({ type: 'exit' } satisfies ToWorker);
            else child.kill('SIGTERM');
          }),
      ),
    );
    this.workers = [];
  }

  /** Synchronous last resort (process exit). */
  killNow(): void {
    for (const worker of this.workers) worker.child.kill('SIGKILL');
  }

  /**
   * One run: every worker opens the library, and once all are ready all are told to go at once.
   * Counter sections: lost updates = sections counted by the workers minus the counter Redis ended
   * with. Permit sections: the most permits seen in use at once, and sections that saw more in use
   * than the semaphore's permits. `processes`: how many of the pool's workers take part (default
   * all; the scaling curve uses fewer).
   */
  async run(
    adapter: string,
    target: RedisTarget,
    admin: Redis,
    keys: { lock: string; counter: string },
    callers: number,
    durationMs: number,
    graceMs: number,
    section: Section = { kind: 'counter' },
    processes = this.size,
  ): Promise<RunOutcome> {
    const dead = this.workers.filter((worker) => !worker.child.connected);
    if (dead.length) {
      // A worker died since the last run (a library crashed it): say so, and start afresh.
      console.error(
        `  (${dead.length} contended worker(s) had exited; restarting the pool: ${dead.map((w) => w.log.join('').trim().slice(-300)).join(' | ')})`,
      );
      await this.stop();
      this.start();
    }
    const workers = this.workers.slice(0, processes);
    for (const worker of workers) this.send(worker, { type: 'open', adapter, target, lockKey: keys.lock, counterKey: keys.counter, callers, section });
    const opened = await Promise.all(workers.map((worker) => this.next(worker, 60_000)));
    const failed = opened.find((message): message is Extract<FromWorker, { type: 'open-failed' }> => message.type === 'open-failed');
    if (failed) {
      // Let the workers that did open close their session again (a zero-length run).
      const ready = workers.filter((_, i) => opened[i]!.type === 'ready');
      for (const worker of ready) this.send(worker, { type: 'go', durationMs: 0, graceMs: 0 });
      await Promise.all(ready.map((worker) => this.next(worker, GRACE_MS)));
      if (failed.couldNotRun) throw new CouldNotRun(failed.reason);
      throw new Error(failed.reason);
    }
    for (const worker of workers) this.send(worker, { type: 'go', durationMs, graceMs });
    const reports = await Promise.all(workers.map((worker) => this.next(worker, durationMs + graceMs + GRACE_MS)));
    const done = reports.filter((message): message is Extract<FromWorker, { type: 'done' }> => message.type === 'done');
    const sections = done.reduce((sum, report) => sum + report.sections, 0);
    const waits = done.flatMap((report) => report.waitsMs);
    const elapsedMs = Math.max(...done.map((report) => report.elapsedMs));
    const counter = Number((await admin.get(keys.counter)) ?? 0);
    const errors = done.reduce((sum, report) => sum + report.errors.errors, 0);
    const firstError = done.find((report) => report.errors.firstError)?.errors.firstError;
    const checked: Record<string, number> =
      section.kind === 'counter'
        ? { counter, lostUpdates: sections - counter }
        : {
            permits: section.permits,
            maxInUse: Math.max(...done.map((report) => report.maxInUse)),
            overPermits: done.reduce((sum, report) => sum + report.overPermits, 0),
          };
    return {
      metrics: {
        sectionsPerSec: elapsedMs > 0 ? (sections / elapsedMs) * 1000 : 0,
        p50WaitMs: percentile(waits, 50),
        p99WaitMs: percentile(waits, 99),
        sections,
        ...checked,
        // Fairness between processes: the busiest one's share of the sections (100 / processes when even).
        busiestProcessPercent: sections > 0 ? (100 * Math.max(...done.map((report) => report.sections))) / sections : 0,
        unfinishedWaits: done.reduce((sum, report) => sum + report.unfinishedWaits, 0),
        processes: workers.length,
        callersPerProcess: callers,
      },
      errors: firstError === undefined ? { errors } : { errors, firstError },
    };
  }

  private send(worker: Worker, message: ToWorker): void {
    if (!worker.child.connected) throw new Error(`a contended worker is gone: ${worker.log.join('').trim().slice(-500)}`);
    worker.child.send(message);
  }

  private next(worker: Worker, timeoutMs: number): Promise<FromWorker> {
    const queued = worker.inbox.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise<FromWorker>((resolve, reject) => {
      const onExit = (code: number | null, signal: string | null): void => {
        clearTimeout(timer);
        worker.waiting = undefined;
        reject(new Error(`a contended worker exited (${code ?? signal}): ${worker.log.join('').slice(-2000)}`));
      };
      const timer = setTimeout(() => {
        worker.child.off('exit', onExit);
        worker.waiting = undefined;
        reject(new Error(`a contended worker gave no answer within ${Math.round(timeoutMs / 1000)} s (stuck)`));
      }, timeoutMs);
      worker.child.once('exit', onExit);
      worker.waiting = (message) => {
        clearTimeout(timer);
        worker.child.off('exit', onExit);
        resolve(message);
      };
    });
  }
}
