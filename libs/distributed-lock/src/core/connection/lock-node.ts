import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../config/redis-client.js';
import { LATE_REPLY, NOT_AFTER, type LockScript, type ScriptArgument } from '../scripts/lock-script.js';
import { monotonicNow } from '../util/clock.js';
import { NodeClock } from './node-clock.js';

/** The commands a script run needs; ioredis' typings of evalsha/eval are overloaded beyond use here. */
interface ScriptCommands {
  evalsha(sha: string, keys: number, ...args: ScriptArgument[]): Promise<unknown>;
  eval(lua: string, keys: number, ...args: ScriptArgument[]): Promise<unknown>;
}

/** Thrown when a guarded script was not run because its caller can no longer be waiting for it (see NodeClock). */
export class LateOperation extends Error {}

/** One place lock state lives (the only one, or one of RedLock's independent masters), where its scripts run. */
export class LockNode {
  private readonly commands: ScriptCommands;
  /** The server's clock, for the deadline of guarded scripts. */
  readonly clock: NodeClock;

  /**
   * `timeoutMs`: how long callers wait for a script's reply at most (the operation timeout): a guarded
   * script refuses to run later than that after it was sent. `before`: what the first script calls wait
   * for (nothing once it is done): the pub/sub choice, so that a lock taken by the first call is released
   * with the right publish command.
   */
  constructor(
    readonly redis: RedisClient,
    readonly target: string,
    private readonly timeoutMs: number,
    private readonly before?: () => Promise<unknown> | undefined,
  ) {
    this.commands = redis as unknown as ScriptCommands;
    this.clock = new NodeClock(() => redis.time());
  }

  /**
   * Runs `script` with `args` as EVALSHA (by the SHA1 the library computed), keys first. A server that
   * does not have the script yet (NOSCRIPT: new node, restart, failover) gets it once as EVAL, which
   * also caches it there. A plain command rather than ioredis' generated method: that adds a promise
   * and closures per call, and inside a pipeline sends the whole Lua text every time. Key prefixes and
   * cluster slot routing apply to EVALSHA's keys as to any command's.
   *
   * A guarded script gets its deadline from the time of this call, and the first ones wait for the
   * server's clock to be read; one whose wait before sending outlasted the operation timeout is not sent
   * at all (LateOperation): its caller has given up on it.
   */
  run<A, R, Raw>(script: LockScript<A, R, Raw>, args: A): Promise<R> {
    const calledAt = monotonicNow();
    const waiting = this.before?.() ?? (script.guarded && !this.clock.known ? this.clock.sample() : undefined);
    if (!waiting) return this.send(script, args, calledAt);
    return waiting.then(async () => {
      if (script.guarded && !this.clock.known) await this.clock.sample();
      if (script.guarded && monotonicNow() - calledAt >= this.timeoutMs)
        throw new LateOperation(`${script.name} was not sent: no reply was possible within ${this.timeoutMs} ms`);
      return this.send(script, args, calledAt);
    });
  }

  private send<A, R, Raw>(script: LockScript<A, R, Raw>, args: A, calledAt: number): Promise<R> {
    const keys = script.keys(args);
    const argv = script.argv(args);
    if (script.guarded) argv.push(`${NOT_AFTER}${this.clock.notAfter(calledAt, this.timeoutMs) ?? ''}`);
    return this.commands
      .evalsha(script.sha, keys.length, ...keys, ...argv)
      .catch((error: unknown) => {
        if (!(error instanceof Error)) throw error;
        if (error.message.startsWith('NOSCRIPT'))
          return this.commands.eval(script.lua, keys.length, ...keys, ...argv).catch((late: unknown) => this.late(late));
        return this.late(error);
      })
      .then((raw) => script.parse(raw as Raw));
  }

  /** A guarded script's refusal (`DLOCK_LATE <server ms>`) teaches the clock and becomes LateOperation; other errors pass. */
  private late(error: unknown): never {
    if (error instanceof Error && error.message.startsWith(LATE_REPLY)) {
      const serverMs = Number(error.message.slice(LATE_REPLY.length + 1));
      if (Number.isFinite(serverMs)) this.clock.observe(serverMs, monotonicNow());
      throw new LateOperation(`Redis would have run it after its caller's operation timeout (${this.timeoutMs} ms), so it changed nothing`);
    }
    throw error;
  }

  /**
   * `WAIT replicas timeout` on the connection that wrote `key`: how many replicas have every write
   * that connection sent so far. In a cluster the command has no key, so it rides in a pipeline
   * behind a read of `key`, which routes it to the master of the key's slot.
   */
  async waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    if (!this.redis.isCluster) return (this.redis as Redis).wait(replicas, timeoutMs);
    const results = await (this.redis as Cluster).pipeline().pttl(key).wait(replicas, timeoutMs).exec();
    const [error, count] = results?.[1] ?? [new Error('no reply to WAIT'), 0];
    if (error) throw error;
    return Number(count);
  }
}
