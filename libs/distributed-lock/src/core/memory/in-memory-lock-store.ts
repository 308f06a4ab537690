import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { MemoryKeyspace, type MemorySubscriber } from './memory-keyspace.js';
import { MEMORY_SCRIPTS } from './memory-scripts.js';

type Status = 'wait' | 'ready' | 'end';

interface RegisteredScript {
  lua: string;
  sha: string;
  numberOfKeys: number;
}

/**
 * An in-memory lock store for unit tests: it stands in for the ioredis client (`options.client`), so
 * the library's whole engine (owners, reentrancy, watchdog, waiting, fencing, every lock kind) runs
 * unchanged, with the Lua scripts replaced by JavaScript twins that run atomically on a shared
 * in-process keyspace. It passes the single-process part of the library's conformance suite.
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
 * hashes); any other command is undefined. Replies arrive asynchronously (after the caller's current
 * synchronous code), as from a socket; no timer is used, so Jest fake timers do not stall it.
 */
export class InMemoryLockStore extends EventEmitter implements MemorySubscriber {
  /** The data, shared with every `duplicate()` of this store. */
  readonly keyspace: MemoryKeyspace;
  readonly isCluster = false;
  status: Status;
  /** What ioredis calls the commands defined with `defineCommand` (read by the health indicator). */
  readonly scriptsSet: Record<string, RegisteredScript> = {};
  private readonly channels = new Set<string>();
  private readonly namesBySha = new Map<string, string>();

  constructor(options: { lazyConnect?: boolean; keyspace?: MemoryKeyspace } = {}) {
    super();
    this.keyspace = options.keyspace ?? new MemoryKeyspace();
    this.status = options.lazyConnect ? 'wait' : 'ready';
  }

  // --- connection life cycle (as ioredis) --------------------------------------------------------

  async connect(): Promise<void> {
    if (this.status === 'end') throw new Error('Connection is closed.');
    if (this.status === 'wait') {
      this.status = 'ready';
      queueMicrotask(() => this.emit('ready'));
    }
  }

  /** Another connection to the same data (ioredis `duplicate()`), e.g. for subscriptions. */
  duplicate(options: { lazyConnect?: boolean } = {}): InMemoryLockStore {
    return new InMemoryLockStore({ lazyConnect: options.lazyConnect, keyspace: this.keyspace });
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
    queueMicrotask(() => this.emit('end'));
  }

  /** Runs a command now (so commands apply in the order they are sent) and replies asynchronously. */
  private reply<T>(run: () => T, subscriberCommand = false): Promise<T> {
    if (this.status === 'end') return Promise.reject(new Error('Connection is closed.'));
    if (this.status === 'wait') void this.connect(); // ioredis connects a lazy client at its first command
    if (!subscriberCommand && this.channels.size > 0) {
      return Promise.reject(new Error('Connection in subscriber mode, only subscriber commands may be used'));
    }
    try {
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  // --- scripts -----------------------------------------------------------------------------------

  /**
   * ioredis `defineCommand`: registers one of the library's scripts as a method. The store runs the
   * script's JavaScript twin; a script it has no twin for fails when called (it cannot run Lua).
   */
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void {
    const numberOfKeys = definition.numberOfKeys ?? 0;
    const sha = sha1(definition.lua);
    this.scriptsSet[name] = { lua: definition.lua, sha, numberOfKeys };
    this.namesBySha.set(sha, name);
    (this as unknown as Record<string, unknown>)[name] = (...args: (string | number | Buffer)[]) => this.runScript(name, numberOfKeys, args);
  }

  /** EVALSHA of a script registered with defineCommand; NOSCRIPT for any other SHA. */
  evalsha(sha: string, numberOfKeys: number | string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    const name = this.namesBySha.get(sha);
    if (name === undefined) {
      return this.reply(() => {
        throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      });
    }
    return this.runScript(name, Number(numberOfKeys), args);
  }

  /** EVAL of the Lua text of a script registered with defineCommand (it has a JavaScript twin). */
  eval(lua: string, numberOfKeys: number | string, ...args: (string | number | Buffer)[]): Promise<unknown> {
    const name = this.namesBySha.get(sha1(lua));
    if (name === undefined) {
      return this.reply(() => {
        throw new Error("InMemoryLockStore cannot run Lua: EVAL of a script that is not one of nestjs-distributed-lock's.");
      });
    }
    return this.runScript(name, Number(numberOfKeys), args);
  }

  private runScript(name: string, numberOfKeys: number, args: (string | number | Buffer)[]): Promise<unknown> {
    return this.reply(() => {
      const twin = MEMORY_SCRIPTS.get(name);
      if (!twin || twin.script.lua !== this.scriptsSet[name]!.lua) {
        throw new Error(`InMemoryLockStore cannot run Lua: "${name}" is not one of nestjs-distributed-lock's scripts. Use a real Redis for your own scripts.`);
      }
      const strings = args.map(String);
      this.keyspace.scriptCalls++;
      return twin.run(this.keyspace, strings.slice(0, numberOfKeys), strings.slice(numberOfKeys));
    });
  }

  /** SCRIPT EXISTS sha... / SCRIPT LOAD lua, for the library's scripts. */
  script(subcommand: string, ...args: string[]): Promise<unknown> {
    return this.reply(() => {
      const known = Object.values(this.scriptsSet);
      switch (subcommand.toUpperCase()) {
        case 'EXISTS':
          return args.map((sha) => (known.some((script) => script.sha === sha) ? 1 : 0));
        case 'LOAD': {
          const script = known.find((candidate) => candidate.lua === args[0]);
          if (!script) throw new Error('InMemoryLockStore cannot load Lua scripts other than the library\'s own.');
          return script.sha;
        }
        default:
          throw new Error(`ERR unknown subcommand '${subcommand}' for the in-memory store's SCRIPT`);
      }
    });
  }

  // --- the commands the library and tests use ----------------------------------------------------

  ping(): Promise<'PONG'> {
    return this.reply(() => 'PONG' as const, true);
  }

  /** WAIT: there are no replicas here, so none acknowledges (replica acknowledgement fails, as it should). */
  wait(_replicas: number, _timeoutMs: number): Promise<number> {
    return this.reply(() => 0);
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

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}
