import { LockMetrics, type LockMetricsSource } from './lock-metrics.js';
import type { LockMetricsOptions } from './lock-metrics.options.js';

/**
 * A client's metrics over its life: started once when it has connected (if there is a meter provider
 * to record into, see LockMetrics.start), stopped when it closes, whichever order the two come in.
 * Starting never fails the connection: without metrics, locks work the same.
 */
export class ClientMetrics {
  private running: LockMetrics | undefined;
  private starting: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly options: LockMetricsOptions | false,
    private readonly source: LockMetricsSource,
  ) {}

  start(): Promise<void> {
    this.starting ??= (async () => {
      if (this.options === false) return;
      const metrics = await LockMetrics.start(this.options, this.source).catch(() => undefined);
      if (this.stopped) metrics?.stop();
      else this.running = metrics;
    })();
    return this.starting;
  }

  stop(): void {
    this.stopped = true;
    this.running?.stop();
    this.running = undefined;
  }
}
