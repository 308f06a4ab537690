/**
 * A process of the scaling set: runs one job (watchdog, waiting or memory; see protocol.ts), reports,
 * and is killed by the parent without cleaning up (the parent flushes Redis before the next run), so
 * that 100 000 held locks or 10 000 pollers never have to be unwound. Started with --expose-gc: heap figures are read
 * after a full collection, in a process that holds nothing else.
 */
import { CouldNotRun } from '../adapters/index.js';
import { describeError, type RunOutcome } from '../scenarios/scenario.js';
import { runMemoryJob } from './memory-job.js';
import type { FromScalingWorker, ScalingJob, ToScalingWorker } from './protocol.js';
import { runWaitingJob } from './waiting-job.js';
import { runWatchdogJob } from './watchdog-job.js';

function run(job: ScalingJob): Promise<RunOutcome> {
  switch (job.kind) {
    case 'watchdog':
      return runWatchdogJob(job);
    case 'waiting':
      return runWaitingJob(job);
    case 'memory':
      return runMemoryJob(job);
  }
}

function reply(message: FromScalingWorker): void {
  process.send!(message);
}

process.once('message', (message: ToScalingWorker) => {
  run(message.job).then(
    (outcome) => reply({ type: 'done', metrics: outcome.metrics, errors: outcome.errors }),
    (error: unknown) => reply({ type: 'failed', couldNotRun: error instanceof CouldNotRun, reason: describeError(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
// A library's background failure must not end the job: the job's own figures say what it saw.
process.on('unhandledRejection', (reason) => console.error(`unhandled rejection in a scaling worker: ${describeError(reason)}`));
