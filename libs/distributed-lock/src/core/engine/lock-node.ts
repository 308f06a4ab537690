import type { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../connection/connection-strategy.js';
import type { LockScript, ScriptArgument } from '../scripts/lock-script.js';

/** The commands a script run needs; ioredis' typings of evalsha/eval are overloaded beyond use here. */
interface ScriptCommands {
  evalsha(sha: string, keys: number, ...args: ScriptArgument[]): Promise<unknown>;
  eval(lua: string, keys: number, ...args: ScriptArgument[]): Promise<unknown>;
}

/** One place lock state lives (the only one, or one of RedLock's independent masters), where its scripts run. */
export class LockNode {
  private readonly commands: ScriptCommands;

  /**
   * `before`: what the first script calls wait for (nothing once it is done): the pub/sub choice, so
   * that a lock taken by the first call is released with the right publish command.
   */
  constructor(
    readonly redis: RedisClient,
    readonly target: string,
    private readonly before?: () => Promise<unknown> | undefined,
  ) {
    this.commands = redis as unknown as ScriptCommands;
  }

  /**
   * Runs `script` with `args` as EVALSHA (by the SHA1 the library computed), keys first. A server that
   * does not have the script yet (NOSCRIPT: new node, restart, failover) gets it once as EVAL, which
   * also caches it there. A plain command rather than ioredis' generated method: that adds a promise
   * and closures per call, and inside a pipeline sends the whole Lua text every time. Key prefixes and
   * cluster slot routing apply to EVALSHA's keys as to any command's.
   */
  run<A, R>(script: LockScript<A, R>, args: A): Promise<R> {
    const waiting = this.before?.();
    return waiting ? waiting.then(() => this.send(script, args)) : this.send(script, args);
  }

  private send<A, R>(script: LockScript<A, R>, args: A): Promise<R> {
    const keys = script.keys(args);
    const argv = script.argv(args);
    return this.commands.evalsha(script.sha, keys.length, ...keys, ...argv).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.commands.eval(script.lua, keys.length, ...keys, ...argv);
    }) as Promise<R>;
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
