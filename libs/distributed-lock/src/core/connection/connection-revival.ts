import type { RedisConnection } from '../redis/redis-port.js';
import type { CancelTimer, Clock } from '../util/clock.js';

/** First pause before reconnecting a connection ioredis gave up; it doubles up to the maximum. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2000;

/**
 * Reconnects the connections a client library gives up by itself (node-redis reconnects for ever by
 * default: only a `reconnectStrategy` that gives up ends one). ioredis ends a connection for good (status
 * `end`: every command then fails with "Connection is closed.") when its connector fails to connect.
 * In sentinel mode that happens when the failover detector's disconnect (on `+switch-master`) comes
 * while a reconnect is asking a sentinel for the master, that is, during a failover, the moment the
 * lock client must reconnect most. A lock client is long-lived, so an ended connection is connected
 * again, after a pause that doubles from 100 ms to 2 s while it keeps failing. Connections the
 * client ends itself are not watched yet (a failed start-up) or no longer (close).
 */
export class ConnectionRevival {
  private stopped = false;
  private readonly timers = new Set<CancelTimer>();

  constructor(private readonly clock: Clock) {}

  watch(connection: RedisConnection): void {
    let pause = FIRST_PAUSE_MS;
    connection.on('ready', () => {
      pause = FIRST_PAUSE_MS;
    });
    connection.on('end', () => {
      if (this.stopped) return;
      const timer = this.clock.setTimer(pause, () => {
        this.timers.delete(timer);
        // A failed attempt ends the connection again, and that 'end' schedules the next one.
        if (!this.stopped && connection.status === 'end') connection.connect().catch(() => undefined);
      });
      this.timers.add(timer);
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    });
  }

  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
  }
}
