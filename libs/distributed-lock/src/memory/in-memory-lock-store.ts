import { EventEmitter } from 'node:events';
import { LuaVm, preloadLuaVm, whenLuaLoaded } from './lua-vm.js';
import { afterThisTask, MemoryKeyspace } from './memory-keyspace.js';
import { redisGlob } from '../core/util/redis-glob.js';
import { ScriptKeyAudit, type StrictKeys } from './strict-keys.js';
import { nameScript } from '../core/util/script-names.js';
import { describe } from '../core/util/duration.js';
import { InvalidLockConfigError } from '../core/errors/invalid-lock-config.error.js';
import { IoredisPort } from '../core/redis/ioredis.port.js';
import type { RedisPort } from '../core/redis/redis-port.js';
import type { Clock } from '../core/util/clock.js';

type Status = 'wait' | 'ready' | 'end';

interface RegisteredScript {
  lua: string;
  sha: string;
  numberOfKeys: number;
}

export interface InMemoryLockStoreOptions {
  /** Do not connect until the first command or `connect()` (as ioredis). */
  lazyConnect?: boolean;
  /** The data to share (default: a new keyspace; `duplicate()` shares its store's). */
  keyspace?: MemoryKeyspace;
  /**
   * Refuse scripts as managed services do (default off: Redis and Valkey themselves refuse neither).
   * `'declared'`: a script that touches a key missing from its KEYS fails (Dragonfly, ElastiCache);
   * `'one-slot'`: also one that declares no key, or keys of two cluster slots (ElastiCache Serverless,
   * Redis Cluster, sharding proxies; run the lock client with `oneSlotPerScript: true` then). The
   * failure is a ScriptKeysError naming the script and the key.
   */
  strictKeys?: StrictKeys | false;
  /**
   * The store's clock (default Node's): what expires keys and what TIME answers. Give it the clock you
   * give the lock client (`LockClientOptions.clock`) to run both in virtual time. Ignored with `keyspace`
   * (the keyspace has its own).
   */
  clock?: Clock;
}

/**
 * An in-memory lock store for unit tests: it stands in for the ioredis client (`options.client`), so
 * the library's whole engine (owners, reentrancy, watchdog, waiting, fencing, every lock kind) runs
 * unchanged, and so do its Lua scripts: they run as they are in an embedded Lua VM (see lua-vm.ts),
 * atomically, on a shared in-process keyspace. It passes the single-process part of the library's
 * conformance suite, and a differential test replays random lock operations against it and a real
 * redis-server and finds the same replies.
 *
 * What it is not: distributed. Locks are shared only by the clients of one store in one process; use
 * a real Redis (and the library's own test suite does) for anything across processes.
 *
 * ```ts
 * const store = new InMemoryLockStore();
 * const locks = await LockClient.connect({ client: store });
 * ```
 *
 * It answers the commands the library uses, plus a few for tests' own data (GET, SET, INCR, lists,
 * hashes, SCAN); any other command is undefined. Scripts may call the commands listed in
 * script-commands.ts. Replies arrive asynchronously (after the caller's current synchronous code), as
 * from a socket; no timer is used, so Jest fake timers do not stall it. The first commands of a
 * process wait for the Lua VM to load (once, a few milliseconds), in the order they were sent.
 *
 * With `strictKeys`, it also refuses scripts the way managed services do (see InMemoryLockStoreOptions):
 * the library's own tests run its conformance suite so, which proves that every script declares every
 * key it touches, and (with `oneSlotPerScript`) keeps them in one cluster slot.
 */
export class InMemoryLockStore extends EventEmitter {
  /** The data, shared with every `duplicate()` of this store. */
  readonly keyspace: MemoryKeyspace;
  readonly isCluster = false;
  status: Status;
  /** The scripts registered with `defineCommand` (ioredis' API, which the store answers; the library itself sends EVALSHA). */
  readonly scriptsSet: Record<string, RegisteredScript> = {};
  private readonly channels = new Set<string>();
  /** See InMemoryLockStoreOptions.strictKeys. */
  readonly strictKeys: StrictKeys | false;

  constructor(options: InMemoryLockStoreOptions = {}) {
    super();
    this.keyspace = options.keyspace ?? new MemoryKeyspace(options.clock);
    this.strictKeys = options.strictKeys ?? false;
    if (this.strictKeys !== false && this.strictKeys !== 'declared' && this.strictKeys !== 'one-slot') {
      throw new InvalidLockConfigError('strictKeys', `expected 'declared', 'one-slot' or false, got ${describe(this.strictKeys)}.`);
    }
    this.status = options.lazyConnect ? 'wait' : 'ready';
    preloadLuaVm();
  }

  /**
   * @internal The port the lock client uses (see PortedClient): this store through its ioredis-like API, without
   * group commit, so every call is answered without a turn of the event loop (Jest's fake timers may
   * hold those back).
   */
  redisPort(): RedisPort {
    return new IoredisPort(this, false);
  }

  // --- connection life cycle (as ioredis) --------------------------------------------------------

  async connect(): Promise<void> {
    if (this.status === 'end') throw new Error('Connection is closed.');
    if (this.status === 'wait') {
      this.status = 'ready';
      afterThisTask(() => this.emit('ready'));
    }
  }

  /** Another connection to the same data (ioredis `duplicate()`), e.g. for subscriptions. */
  duplicate(options: { lazyConnect?: boolean } = {}): InMemoryLockStore {
    return new InMemoryLockStore({ lazyConnect: options.lazyConnect, keyspace: this.keyspace, strictKeys: this.strictKeys });
  }

  quit(): Promise<'OK'> {
    return this.reply(() => {
      this.end();
      return 'OK' as const;
    }, true);
  }

  disconnect(): void {
    this.end();
  }

  private end(): void {
    if (this.status === 'end') return;
    for (const channel of this.channels) this.keyspace.unsubscribe(channel, this);
    this.channels.clear();
    this.status = 'end';
    afterThisTask(() => this.emit('end'));
  }

  /**
   * Runs a command as soon as it can (now, once the Lua VM is loaded), in the order commands are sent,
   * and replies asynchronously.
   */
  private reply<T>(run: (vm: LuaVm) => T, subscriberCommand = false): Promise<T> {
    if (this.status === 'end') return Promise.reject(new Error('Connection is closed.'));
    if (this.status === 'wait') void this.connect(); // ioredis connects a lazy client at its first command
    if (!subscriberCommand && this.channels.size > 0) {
      return Promise.reject(new Error('Connection in subscriber mode, only subscriber commands may be used'));
    }
    return whenLuaLoaded(run);
  }

  // --- scripts -----------------------------------------------------------------------------------

  /**
   * ioredis `defineCommand`: registers a script as a method (EVALSHA, as ioredis sends it). The store
   * puts it in its script cache at once, as if loaded with SCRIPT LOAD, so no first call gets NOSCRIPT.
   */
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void {
    const numberOfKeys = definition.numberOfKeys ?? 0;
    const sha = LuaVm.sha1(definition.lua);
    this.scriptsSet[name] = { lua: definition.lua, sha, numberOfKeys };
    nameScript(sha, name);
    this.keyspace.scripts.set(sha, definition.lua);
    (this as unknown as Record<string, unknown>)[name] = (...args: (string | number | Buffer)[]) => this.evalsha(sha, numberOfKeys, ...args);
  }

  /** EVALSHA of a script in the store's script cache; NOSCRIPT for any other SHA. */
  evalsha(sha: string, numberOfKeys: number | string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    return this.reply((vm) => {
      const lua = this.keyspace.scripts.get(sha);
      if (lua === undefined) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      return this.runScript(vm, vm.compile(lua, sha), numberOfKeys, args);
    });
  }

  /** EVAL: compiles the script (kept in the script cache, as Redis does) and runs it. */
  eval(lua: string, numberOfKeys: number | string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    return this.reply((vm) => {
      const sha = vm.compile(lua);
      this.keyspace.scripts.set(sha, lua);
      return this.runScript(vm, sha, numberOfKeys, args);
    });
  }

  private runScript(vm: LuaVm, sha: string, numberOfKeys: number | string, args: (string | number | Buffer)[]): unknown {
    const keys = Number(numberOfKeys);
    if (!Number.isInteger(keys)) throw new Error('ERR value is not an integer or out of range');
    if (keys < 0) throw new Error("ERR Number of keys can't be negative");
    if (keys > args.length) throw new Error("ERR Number of keys can't be greater than number of args");
    const strings = args.map(String);
    const declared = strings.slice(0, keys);
    const audit = this.strictKeys ? new ScriptKeyAudit(this.strictKeys, sha, declared, this.keyspace.scriptKeyViolations) : undefined;
    audit?.beforeRun();
    this.keyspace.scriptCalls++;
    try {
      return vm.run(this.keyspace, sha, declared, strings.slice(keys), audit);
    } finally {
      audit?.afterRun(); // its error replaces the script's: strict keys' refusal is what failed it
    }
  }

  /** SCRIPT LOAD lua / EXISTS sha... / FLUSH. */
  script(subcommand: string, ...args: string[]): Promise<unknown> {
    return this.reply((vm) => {
      switch (subcommand.toUpperCase()) {
        case 'EXISTS':
          return args.map((sha) => (this.keyspace.scripts.has(sha.toLowerCase()) ? 1 : 0));
        case 'LOAD': {
          const sha = vm.compile(args[0] ?? '');
          this.keyspace.scripts.set(sha, args[0] ?? '');
          return sha;
        }
        case 'FLUSH':
          this.keyspace.scripts.clear();
          return 'OK';
        default:
          throw new Error(`ERR unknown subcommand '${subcommand}' for the in-memory store's SCRIPT`);
      }
    });
  }

  // --- the commands the library and tests use ----------------------------------------------------

  ping(): Promise<'PONG'> {
    return this.reply(() => 'PONG' as const, true);
  }

  /** TIME: the store's clock, as seconds and microseconds (what Redis replies). */
  time(): Promise<[string, string]> {
    return this.reply(() => {
      const ms = this.keyspace.serverTimeMs();
      return [String(Math.floor(ms / 1000)), String((ms % 1000) * 1000)] as [string, string];
    });
  }

  /** WAIT: there are no replicas here, so none acknowledges (replica acknowledgement fails, as it should). */
  wait(_replicas: number, _timeoutMs: number): Promise<number> {
    return this.reply(() => 0);
  }

  /** SCAN in one call: every live key matching MATCH (default all); COUNT is a hint, as in Redis. */
  scan(_cursor: string | number, ...options: (string | number)[]): Promise<[string, string[]]> {
    return this.reply(() => {
      let match: RegExp | undefined;
      for (let i = 0; i < options.length; i += 2) {
        const option = String(options[i]).toUpperCase();
        if (option === 'MATCH') match = redisGlob(String(options[i + 1]));
        else if (option !== 'COUNT') throw new Error(`ERR the in-memory store does not support SCAN option ${option}`);
      }
      const keys = this.keyspace.keys();
      return ['0', match ? keys.filter((key) => match.test(key)) : keys] as [string, string[]];
    });
  }

  exists(...keys: string[]): Promise<number> {
    return this.reply(() => this.keyspace.exists(...keys));
  }

  del(...keys: string[]): Promise<number> {
    return this.reply(() => this.keyspace.del(...keys));
  }

  pttl(key: string): Promise<number> {
    return this.reply(() => this.keyspace.pttl(key));
  }

  pexpire(key: string, ms: number | string): Promise<number> {
    return this.reply(() => this.keyspace.pexpire(key, ms));
  }

  get(key: string): Promise<string | null> {
    return this.reply(() => this.keyspace.get(key));
  }

  /** SET key value, optionally with 'PX', ms and/or 'NX'. */
  set(key: string, value: string | number, ...options: (string | number)[]): Promise<'OK' | null> {
    return this.reply(() => {
      let px: number | undefined;
      let nx = false;
      for (let i = 0; i < options.length; i++) {
        const option = String(options[i]).toUpperCase();
        if (option === 'PX') px = Number(options[++i]);
        else if (option === 'EX') px = Number(options[++i]) * 1000;
        else if (option === 'NX') nx = true;
        else throw new Error(`ERR the in-memory store does not support SET option ${option}`);
      }
      return this.keyspace.set(key, String(value), { px, nx });
    });
  }

  incr(key: string): Promise<number> {
    return this.reply(() => this.keyspace.incr(key));
  }

  incrby(key: string, by: number): Promise<number> {
    return this.reply(() => this.keyspace.incrby(key, by));
  }

  hget(key: string, field: string): Promise<string | null> {
    return this.reply(() => this.keyspace.hget(key, field));
  }

  hmget(key: string, ...fields: string[]): Promise<(string | null)[]> {
    return this.reply(() => this.keyspace.hmget(key, ...fields));
  }

  hgetall(key: string): Promise<Record<string, string>> {
    return this.reply(() => this.keyspace.hgetall(key));
  }

  hset(key: string, ...pairs: (string | number)[]): Promise<number> {
    return this.reply(() => this.keyspace.hset(key, ...pairs));
  }

  hincrby(key: string, field: string, by: number): Promise<number> {
    return this.reply(() => this.keyspace.hincrby(key, field, by));
  }

  hdel(key: string, ...fields: string[]): Promise<number> {
    return this.reply(() => this.keyspace.hdel(key, ...fields));
  }

  zcard(key: string): Promise<number> {
    return this.reply(() => this.keyspace.zcard(key));
  }

  rpush(key: string, ...values: (string | number)[]): Promise<number> {
    return this.reply(() => this.keyspace.rpush(key, ...values.map(String)));
  }

  llen(key: string): Promise<number> {
    return this.reply(() => this.keyspace.llen(key));
  }

  lrange(key: string, start: number, stop: number): Promise<string[]> {
    return this.reply(() => this.keyspace.lrange(key, start, stop));
  }

  publish(channel: string, message: string): Promise<number> {
    return this.reply(() => this.keyspace.publish(channel, message));
  }

  flushall(): Promise<'OK'> {
    return this.reply(() => {
      this.keyspace.flushall();
      return 'OK' as const;
    });
  }

  // --- pub/sub -----------------------------------------------------------------------------------

  /** SUBSCRIBE: resolves with the number of channels this connection is subscribed to. */
  subscribe(...channels: string[]): Promise<number> {
    return this.reply(() => {
      for (const channel of channels) {
        this.channels.add(channel);
        this.keyspace.subscribe(channel, this);
      }
      return this.channels.size;
    }, true);
  }

  unsubscribe(...channels: string[]): Promise<number> {
    return this.reply(() => {
      for (const channel of channels.length > 0 ? channels : [...this.channels]) {
        this.channels.delete(channel);
        this.keyspace.unsubscribe(channel, this);
      }
      return this.channels.size;
    }, true);
  }

  /** @internal Called by the keyspace for a message published on a channel this connection follows. */
  deliver(channel: string, message: string): void {
    if (this.status !== 'end' && this.channels.has(channel)) this.emit('message', channel, message);
  }
}
