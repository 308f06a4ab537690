import { Injectable } from '@nestjs/common';
import type { Duration } from '../core/index.js';
import { type RedisCommands, type RedisConnection, LOCK_SCRIPTS, toMilliseconds, settleWithin } from '../core/internal.js';
import type { Clock } from '../core/index.js';
import { LockService } from './lock.service.js';

/** One check of the indicator: what was found, and whether it is acceptable. */
export interface LockHealthCheck {
  ok: boolean;
  detail: string;
}

/** What the indicator reports under its key (the shape @nestjs/terminus expects). */
export type LockHealthDetails = {
  status: 'up' | 'down';
  mode: string;
  target: string;
  redis: LockHealthCheck;
  scripts: LockHealthCheck;
  subscriber: LockHealthCheck;
  /** Each node's circuit breaker: ok while every one is closed (open or half-open: lock calls to that node are refused at once). */
  circuit: LockHealthCheck;
  /** Locks this process holds now. */
  heldLocks: number;
};

export type LockHealthResult<K extends string> = Record<K, LockHealthDetails>;

export interface LockHealthOptions {
  /** Longest wait for each Redis answer (default 1 s). */
  timeout?: Duration;
}

const DEFAULT_TIMEOUT_MS = 1000;
/**
 * A @nestjs/terminus health indicator (it needs nothing from terminus: it returns the
 * `{ [key]: { status: 'up' | 'down', ... } }` shape terminus' HealthCheckService aggregates), or a
 * plain readiness probe. Up when: every lock node answers PING within the timeout; the library's Lua
 * scripts are in each node's script cache (missing ones, e.g. after a Redis restart, are loaded with
 * SCRIPT LOAD, so "up" proves Redis accepts them); and every subscriber connection (unlock
 * notifications) is connected; and no node's circuit breaker is open (it refuses lock calls until a
 * probe gets a reply). Never reports owner ids or tokens.
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.locks.isHealthy('locks')]); }
 * ```
 */
@Injectable()
export class DistributedLockHealthIndicator {
  constructor(private readonly locks: LockService) {}

  async isHealthy<K extends string = 'distributed-lock'>(key: K = 'distributed-lock' as K, options: LockHealthOptions = {}): Promise<LockHealthResult<K>> {
    const timeoutMs = options.timeout === undefined ? DEFAULT_TIMEOUT_MS : toMilliseconds(options.timeout, 'timeout', { min: 1 });
    const { commands, subscribers } = this.locks.healthTargets();
    // The breakers as the check starts: a reply to a command held on a healed link may close one at any
    // moment after, and the pings below are such replies.
    const circuits = this.locks.circuits();
    const redis = await this.check(commands, async ({ client }) => {
      const startedAt = this.locks.clock.now();
      await within(this.locks.clock, ping(client), timeoutMs);
      return `PONG in ${Math.round(this.locks.clock.now() - startedAt)} ms`;
    });
    const scripts = redis.ok
      ? await this.check(commands, async ({ client }) => within(this.locks.clock, ensureScripts(client), timeoutMs))
      : { ok: false, detail: 'not checked: Redis does not answer' };
    const subscriber = checkSync(subscribers, ({ client }) => {
      if (client.status !== 'ready') throw new Error(`connection is ${client.status}`);
      return 'connected';
    });
    const circuit = merge(
      circuits.length === 0
        ? [{ ok: true, detail: 'no circuit breaker' }]
        : circuits.map(({ node, state, failures }) =>
            state === 'closed' ? { ok: true, detail: 'closed' } : { ok: false, detail: `${node}: ${state} after ${failures} failures in a row` },
          ),
    );
    const up = redis.ok && scripts.ok && subscriber.ok && circuit.ok;
    const details: LockHealthDetails = {
      status: up ? 'up' : 'down',
      mode: this.locks.mode,
      target: this.locks.target,
      redis,
      scripts,
      subscriber,
      circuit,
      heldLocks: this.locks.stats().held,
    };
    return { [key]: details } as LockHealthResult<K>;
  }

  private async check<C>(
    targets: { target: string; client: C }[],
    probe: (target: { target: string; client: C }) => Promise<string>,
  ): Promise<LockHealthCheck> {
    const results = await Promise.all(
      targets.map(async (target) => {
        try {
          return { ok: true, detail: await probe(target) };
        } catch (error) {
          return { ok: false, detail: `${target.target}: ${(error as Error).message}` };
        }
      }),
    );
    return merge(results);
  }
}

function checkSync<C>(targets: { target: string; client: C }[], probe: (target: { target: string; client: C }) => string): LockHealthCheck {
  return merge(
    targets.map((target) => {
      try {
        return { ok: true, detail: probe(target) };
      } catch (error) {
        return { ok: false, detail: `${target.target}: ${(error as Error).message}` };
      }
    }),
  );
}

function merge(results: LockHealthCheck[]): LockHealthCheck {
  const failed = results.filter((result) => !result.ok);
  if (failed.length > 0) return { ok: false, detail: failed.map((result) => result.detail).join('; ') };
  return { ok: true, detail: [...new Set(results.map((result) => result.detail))].join('; ') };
}

async function ping(client: RedisCommands & RedisConnection): Promise<void> {
  // A connection that is not ready would queue the PING until it reconnects: report it at once.
  if (client.status !== 'ready') throw new Error(`connection is ${client.status}`);
  // Every master of a cluster, else the one connection.
  const masters = await client.masters();
  if (masters.length === 0) throw new Error('no cluster master known');
  await Promise.all(masters.map((node) => node.ping()));
}

/** SCRIPT EXISTS for every library script on this connection's node(s); SCRIPT LOAD of those missing. */
async function ensureScripts(client: RedisCommands): Promise<string> {
  const scripts = LOCK_SCRIPTS;
  const nodes = await client.masters();
  let loaded = 0;
  await Promise.all(
    nodes.map(async (node) => {
      const exists = (await node.serverCommand(['SCRIPT', 'EXISTS', ...scripts.map((script) => script.sha)])) as number[];
      const missing = scripts.filter((_, i) => Number(exists[i]) !== 1);
      for (const script of missing) {
        const sha = String(await node.serverCommand(['SCRIPT', 'LOAD', script.lua]));
        if (sha !== script.sha) throw new Error(`SCRIPT LOAD returned ${sha}, expected ${script.sha}`);
        loaded += 1;
      }
    }),
  );
  return `${scripts.length} scripts cached${loaded > 0 ? ` (${loaded} loaded now)` : ''}`;
}

function within<T>(clock: Clock, operation: Promise<T>, timeoutMs: number): Promise<T> {
  return settleWithin(clock, operation, timeoutMs, () => {
    throw new Error(`no answer within ${timeoutMs} ms`);
  });
}
