import type { Clock } from '../../distributed-lock/src/core/util/clock.js';
import { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import { MemoryKeyspace, type MemorySubscriber } from '../../distributed-lock/src/memory/memory-keyspace.js';
import type { Scheduler } from './scheduler.js';
import { SIM_EPOCH_MS } from './sim-clock.js';

/** What a client sends: a script by SHA or text, a plain command, or a (un)subscription. */
export type Command =
  | { readonly kind: 'evalsha'; readonly sha: string; readonly keys: readonly string[]; readonly argv: readonly string[] }
  | { readonly kind: 'eval'; readonly lua: string; readonly keys: readonly string[]; readonly argv: readonly string[] }
  | { readonly kind: 'call'; readonly name: string; readonly args: readonly string[] }
  | { readonly kind: 'subscribe' | 'unsubscribe'; readonly channel: string; readonly subscriber: MemorySubscriber };

/** A server-side change made from outside the library (a mutant: a known bug put back on purpose). */
export interface ServerMutation {
  readonly name: string;
  /** Rewrites a script's text before it is compiled (undefined: leave it alone). */
  readonly lua?: (lua: string) => string;
  /** Rewrites a script call's arguments before it runs. */
  readonly argv?: (argv: readonly string[]) => readonly string[];
}

/** Called after every script run, with the script's SHA and keys (the invariants look at the data). */
export type AfterScript = (server: SimServer, keys: readonly string[]) => void;

/** Thrown for an error reply of the server (as a Redis client's ReplyError). */
export class ReplyError extends Error {
  override readonly name = 'ReplyError';
}

/**
 * One simulated Redis server: the in-memory store's keyspace and the real Lua of the library (one
 * Lua VM per worker, shared by every server), behind the simulated network. Commands run atomically,
 * at the instant they arrive. Its clock is the simulation's time plus a fixed skew; key expiry follows
 * it. It can go down and come back, with or without its data, and can be replaced by a copy of its
 * data from some time ago (a replica promoted after asynchronous replication).
 */
export class SimServer {
  keyspace: MemoryKeyspace;
  up = true;
  /** The script cache (SCRIPT LOAD / EVAL): lost with the data. */
  private scripts = new Map<string, string>();
  /** Copies of the data taken while it runs, for a replica to be promoted from (see copyAsOf). */
  private readonly copies: { at: number; keyspace: MemoryKeyspace }[] = [];
  readonly clock: Clock;
  scriptRuns = 0;
  /** Whether the mutation (if any) changed a script or its arguments in this run. */
  mutated = false;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly vm: LuaVm,
    /** How far its clock reads from the true time, in ms (a promoted replica has its own). */
    public skewMs: number,
    private readonly mutation: ServerMutation | undefined,
    private readonly afterScript: AfterScript | undefined,
  ) {
    this.clock = {
      now: () => scheduler.now,
      wallNow: () => SIM_EPOCH_MS + scheduler.now + this.skewMs,
      setTimer: () => () => undefined,
      soon: () => () => undefined,
      keepAlive: () => () => undefined,
    };
    this.keyspace = new MemoryKeyspace(this.clock);
  }

  /** Runs one command; an error reply is thrown as a ReplyError. */
  execute(command: Command): unknown {
    switch (command.kind) {
      case 'evalsha': {
        const lua = this.scripts.get(command.sha);
        if (lua === undefined) throw new ReplyError('NOSCRIPT No matching script. Please use EVAL.');
        return this.runScript(command.sha, lua, command.keys, command.argv);
      }
      case 'eval': {
        const sha = LuaVm.sha1(command.lua);
        this.scripts.set(sha, command.lua);
        return this.runScript(sha, command.lua, command.keys, command.argv);
      }
      case 'subscribe':
        this.keyspace.subscribe(command.channel, command.subscriber);
        return 1;
      case 'unsubscribe':
        this.keyspace.unsubscribe(command.channel, command.subscriber);
        return 0;
      case 'call':
        return this.call(command.name, command.args);
    }
  }

  /** Keeps a copy of the data now (a replica's view at this instant), dropping copies older than `keepMs`. */
  keepCopy(keepMs: number): void {
    this.copies.push({ at: this.scheduler.now, keyspace: this.keyspace.copy() });
    while (this.copies.length > 1 && this.copies[1]!.at <= this.scheduler.now - keepMs) this.copies.shift();
  }

  /**
   * The data as a replica lagging `lagMs` behind has it: the newest copy taken at least that long ago
   * (or an empty keyspace if none is that old).
   */
  copyAsOf(lagMs: number): MemoryKeyspace {
    let chosen: MemoryKeyspace | undefined;
    for (const copy of this.copies) if (copy.at <= this.scheduler.now - lagMs) chosen = copy.keyspace;
    return chosen ? chosen.copy() : new MemoryKeyspace(this.clock);
  }

  /** Replaces the data (a restart without persistence: empty; a failover: a replica's copy). Scripts and subscriptions go. */
  replaceData(keyspace: MemoryKeyspace): void {
    this.keyspace = keyspace;
    this.scripts = new Map();
    this.copies.length = 0;
  }

  private runScript(sha: string, lua: string, keys: readonly string[], argv: readonly string[]): unknown {
    const rewritten = this.mutation?.lua?.(lua);
    const changedLua = rewritten !== undefined && rewritten !== lua;
    const compiledSha = changedLua ? `${sha}-${this.mutation!.name}` : sha;
    this.vm.compile(changedLua ? rewritten : lua, compiledSha);
    const args = this.mutation?.argv ? this.mutation.argv(argv) : argv;
    if (changedLua || args.some((arg, i) => arg !== argv[i])) this.mutated = true;
    this.scriptRuns++;
    try {
      return this.vm.run(this.keyspace, compiledSha, [...keys], [...args]);
    } catch (error) {
      throw new ReplyError((error as Error).message);
    } finally {
      this.afterScript?.(this, keys);
    }
  }

  private call(name: string, args: readonly string[]): unknown {
    const ks = this.keyspace;
    const [a, b, c] = args;
    switch (name) {
      case 'ping':
        return 'PONG';
      case 'time': {
        const ms = ks.serverTimeMs();
        return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000)];
      }
      case 'get':
        return ks.get(a!);
      case 'exists':
        return ks.exists(...args);
      case 'pttl':
        return ks.pttl(a!);
      case 'zcard':
        return ks.zcard(a!);
      case 'hmget':
        return ks.hmget(a!, ...args.slice(1));
      case 'hgetall':
        return ks.hgetall(a!);
      case 'hset':
        return ks.hset(a!, ...args.slice(1));
      case 'pexpire':
        return ks.pexpire(a!, b!);
      case 'del':
        return ks.del(...args);
      case 'wait':
        return 0; // no replicas acknowledge here
      case 'scan': {
        const pattern = c ?? '*';
        const regex = new RegExp(
          `^${pattern
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '.*')
            .replace(/\?/g, '.')}$`,
        );
        return ['0', ks.keys().filter((key) => regex.test(key))];
      }
      case 'command':
        return [null]; // COMMAND INFO SPUBLISH: no sharded pub/sub here
      case 'info':
        return 'redis_version:7.0.15\r\n';
      case 'script':
        if (a?.toLowerCase() === 'exists') return args.slice(1).map((sha) => (this.scripts.has(sha) ? 1 : 0));
        if (a?.toLowerCase() === 'load') {
          const sha = LuaVm.sha1(b!);
          this.scripts.set(sha, b!);
          return sha;
        }
        throw new ReplyError(`ERR unknown SCRIPT subcommand ${a}`);
      default:
        throw new ReplyError(`ERR unknown command '${name}'`);
    }
  }
}
