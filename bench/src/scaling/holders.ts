/**
 * Locks held for a while, renewed by each library's own mechanism, for the watchdog and memory curves
 * and for the holders of the waiting curve. Every library renews every `periodMs`:
 *
 * - ours: `client.lock(name)` without leaseTime, `watchdogTimeout: 3 x period`: one watchdog timer for
 *   the process renews every lock it holds, all at once, every third of the timeout (the default is
 *   30 s, so every 10 s);
 * - redis-semaphore: `new Mutex(client, name, { lockTimeout: 3 x period, refreshInterval: period })`:
 *   one `setInterval` per held lock, each renewing its own lock (its default refreshInterval is
 *   0.8 x lockTimeout);
 * - redlock: `redlock.using([name], duration, routine)`: one timer per held lock that extends it
 *   `automaticExtensionThreshold` (500 ms) before it expires; the duration is chosen so that this
 *   happens every `periodMs` (duration = (period + 502) / 0.99, as redlock subtracts its drift);
 * - raw: `SET NX PX 3 x period`, no renewal (memory only).
 */
import { LockClient } from 'nestjs-distributed-lock';
import type { Redis } from 'ioredis';
import type { Release, RedisTarget } from '../adapters/adapter.js';
import { REDLOCK_SETTINGS, type RedlockConstructor } from '../adapters/redlock.adapter.js';
import { closeRedis, connectRedis } from '../adapters/redis-connection.js';

export interface Held {
  release: Release;
  /** The fencing token, where the library gives one. */
  token?: number;
}

export interface HoldSession {
  hold(name: string): Promise<Held>;
  /** Keys this library keeps in Redis for a lock name (the lock itself, a fencing counter...). */
  keysOf(name: string): { lock: string; fence?: string };
  /** Renewals as the library reports them: monotonic start and end of each (ours only). */
  onRenewal?(listener: (startedAt: number, endedAt: number) => void): void;
  /** Held locks the library reports lost (a renewal that came too late or was refused). */
  readonly lost: number;
  close(): Promise<void>;
}

export interface Holder {
  id: string;
  /** How it renews, for the report; undefined: it does not (the raw baseline). */
  renewal: string | undefined;
  open(target: RedisTarget, periodMs: number): Promise<HoldSession>;
}

const ONE_DAY_MS = 24 * 3600 * 1000;

const ours: Holder = {
  id: 'ours',
  renewal: 'watchdog: one process-wide timer renews every held lock every watchdogTimeout / 3 (default 30 s / 3 = 10 s)',
  async open(target, periodMs) {
    const client = await LockClient.connect({ connection: { mode: 'single', host: target.host, port: target.port }, watchdogTimeout: 3 * periodMs });
    let lost = 0;
    client.events.on('lost', () => (lost += 1));
    return {
      get lost() {
        return lost;
      },
      async hold(name) {
        const handle = await client.lock(name);
        return { release: () => handle.unlock(), token: handle.token };
      },
      // One fencing counter per key prefix outside a cluster, whatever the name.
      keysOf: (name) => ({ lock: `${client.keyPrefix}{${name}}`, fence: `${client.keyPrefix}fence` }),
      onRenewal(listener) {
        client.events.on('renewed', (event) => {
          const now = performance.now();
          listener(now - event.tookMs, now);
        });
      },
      close: () => client.close(),
    };
  },
};

interface MutexLike {
  acquire(): Promise<void>;
  release(): Promise<void>;
}
type MutexConstructor = new (client: Redis, key: string, options: Record<string, number | (() => void)>) => MutexLike;

const redisSemaphore: Holder = {
  id: 'redis-semaphore',
  renewal: 'refreshInterval: one setInterval per held Mutex (default 0.8 x lockTimeout)',
  async open(target, periodMs) {
    const { Mutex } = (await import('redis-semaphore')) as unknown as { Mutex: MutexConstructor };
    const redis = await connectRedis(target);
    let lost = 0;
    const onLockLost = (): void => {
      lost += 1;
    };
    return {
      get lost() {
        return lost;
      },
      async hold(name) {
        const mutex = new Mutex(redis, name, { lockTimeout: 3 * periodMs, refreshInterval: periodMs, acquireTimeout: ONE_DAY_MS, onLockLost });
        await mutex.acquire();
        return { release: () => mutex.release() };
      },
      keysOf: (name) => ({ lock: `mutex:${name}` }),
      close: () => closeRedis(redis),
    };
  },
};

interface RedlockUsing {
  using(resources: string[], duration: number, routine: (signal: AbortSignal) => Promise<void>): Promise<void>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
}

/** redlock extends `automaticExtensionThreshold` before `expiration`, which is start + duration - (1 % of duration + 2 ms). */
export function redlockDuration(periodMs: number): number {
  return Math.round((periodMs + REDLOCK_SETTINGS.automaticExtensionThreshold + 2) / (1 - REDLOCK_SETTINGS.driftFactor));
}

const redlock: Holder = {
  id: 'redlock',
  renewal: 'using(): one timer per held lock, extending it automaticExtensionThreshold (500 ms) before it expires',
  async open(target, periodMs) {
    const specifier: string = 'redlock';
    const Redlock = ((await import(specifier)) as { default: RedlockConstructor }).default;
    const redis = await connectRedis(target);
    const instance = new Redlock([redis], { ...REDLOCK_SETTINGS }) as unknown as RedlockUsing;
    instance.on('error', () => undefined);
    const duration = redlockDuration(periodMs);
    let lost = 0;
    return {
      get lost() {
        return lost;
      },
      hold(name) {
        return new Promise<Held>((resolve, reject) => {
          let finish: (() => void) | undefined;
          const used = instance.using([name], duration, async (signal) => {
            // using() aborts the routine's signal when an extension fails and the lock expires.
            signal.addEventListener('abort', () => (lost += 1), { once: true });
            await new Promise<void>((done) => {
              finish = done;
              resolve({ release });
            });
          });
          const release = async (): Promise<void> => {
            finish?.();
            await used;
          };
          used.catch(reject);
        });
      },
      keysOf: (name) => ({ lock: name }),
      close: () => closeRedis(redis),
    };
  },
};

const raw: Holder = {
  id: 'raw',
  renewal: undefined,
  async open(target, periodMs) {
    const redis = await connectRedis(target);
    let sequence = 0;
    const prefix = `${process.pid}-${Date.now()}`;
    return {
      lost: 0,
      async hold(name) {
        const token = `${prefix}:${++sequence}`;
        if ((await redis.set(name, token, 'PX', 3 * periodMs, 'NX')) !== 'OK') throw new Error(`raw hold: ${name} is taken`);
        return {
          release: async () => redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0", 1, name, token),
        };
      },
      keysOf: (name) => ({ lock: name }),
      close: () => closeRedis(redis),
    };
  },
};

export const HOLDERS: readonly Holder[] = [raw, ours, redisSemaphore, redlock];

export function holderFor(id: string): Holder | undefined {
  return HOLDERS.find((holder) => holder.id === id);
}
