import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CouldNotRun } from '../adapters/adapter.js';
import type { RunOutcome } from '../scenarios/scenario.js';
import type { FromScalingWorker, ScalingJob, ToScalingWorker } from './protocol.js';

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
const running = new Set<ReturnType<typeof fork>>();

/**
 * Runs one job in a fresh worker process (with --expose-gc) and kills the process once it has
 * answered. BENCH_WORKER_NODE_OPTIONS adds Node options (e.g. --cpu-prof) as for the contended workers.
 */
export function runInWorker(job: ScalingJob, timeoutMs: number): Promise<RunOutcome> {
  const execArgv = ['--expose-gc', ...(process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [])];
  // 'advanced' (structured clone) keeps NaN, which marks a figure that does not apply, as NaN.
  const child = fork(WORKER, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv, serialization: 'advanced' });
  running.add(child);
  const log: string[] = [];
  const keep = (chunk: Buffer): void => {
    log.push(chunk.toString());
    if (log.length > 50) log.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return new Promise<RunOutcome>((resolve, reject) => {
    const finish = (settle: () => void): void => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      running.delete(child);
      settle();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`the ${job.kind} worker gave no answer within ${Math.round(timeoutMs / 1000)} s: ${log.join('').slice(-500)}`))),
      timeoutMs,
    );
    child.once('exit', (code, signal) => finish(() => reject(new Error(`the ${job.kind} worker exited (${code ?? signal}): ${log.join('').slice(-1000)}`))));
    child.once('message', (message: FromScalingWorker) => {
      if (message.type === 'done') finish(() => resolve({ metrics: message.metrics, errors: message.errors }));
      else finish(() => reject(message.couldNotRun ? new CouldNotRun(message.reason) : new Error(message.reason)));
    });
    child.send({ type: 'job', job } satisfies ToScalingWorker);
  });
}

/** Synchronous last resort (process exit): kills every worker still running. */
export function killWorkers(): void {
  for (const child of running) child.kill('SIGKILL');
}
