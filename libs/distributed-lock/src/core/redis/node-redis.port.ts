import { RedisClientNotConnectedError } from '../errors/redis-client-not-connected.error.js';
import { systemClock } from '../util/clock.js';
import { settleWithin } from '../util/late-timer.js';
import type { NodeRedisCommandOptions } from './node-redis.types.js';
import { isErrorClass, isNoScript } from './reply-errors.js';
import type { ConnectionEvent, ConnectionStatus, PubSubPort, RedisCommands, RedisPort, ScriptSource } from './redis-port.js';

/** Sent with every command: node-redis' default reply types, whatever type mapping the user's client has. */
export const DEFAULT_REPLY_TYPES: NodeRedisCommandOptions = Object.freeze({ typeMapping: Object.freeze({}) });

/** A field, value list (RESP2's HGETALL) or a map (RESP3's) as an object. */
function asRecord(reply: unknown): Record<string, string> {
  if (Array.isArray(reply)) {
    const record: Record<string, string> = {};
    for (let i = 0; i + 1 < reply.length; i += 2) record[String(reply[i])] = String(reply[i + 1]);
    return record;
  }
  if (reply instanceof Map) return Object.fromEntries([...reply].map(([field, value]) => [String(field), String(value)]));
  return (reply ?? {}) as Record<string, string>;
}

/** How a node-redis object tells of one of the core's connection events: its own event, and which of them count. */
export interface NodeRedisEvent {
  readonly name: string;
  /** Filters the event's arguments (sentinel: only a change of master counts as "ready again"). */
  readonly accept?: (...args: unknown[]) => boolean;
}

/** What the connection side needs of a node-redis client, cluster or sentinel. */
interface NodeRedisTarget {
  readonly isOpen: boolean;
  readonly isReady?: boolean;
  connect?(): Promise<unknown>;
  close?(): Promise<unknown>;
  destroy?(): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

/** The life cycle of a node-redis connection the library made (`owned`), or of the user's, which it never opens or closes. */
export abstract class NodeRedisConnection {
  readonly driver = 'node-redis' as const;
  private connecting: Promise<void> | undefined;
  private closed = false;
  /** The listeners given to `on`, as registered on the node-redis object, so that `off` finds them. */
  private readonly listeners = new Map<(error?: Error) => void, { name: string; wrapper: (...args: unknown[]) => void }[]>();

  constructor(
    /** What kind of node-redis object, for messages: "node-redis client", "node-redis cluster"... */
    readonly description: string,
    private readonly target: NodeRedisTarget,
    readonly owned: boolean,
  ) {}

  get status(): ConnectionStatus {
    if (!this.target.isOpen) return this.closed ? 'end' : 'wait';
    return this.target.isReady === false ? 'reconnecting' : 'ready';
  }

  /** Opens a connection the library made; a user's client must be connected by its owner (RedisClientNotConnectedError). */
  connect(): Promise<void> {
    if (this.target.isOpen) return Promise.resolve();
    if (!this.owned || !this.target.connect) return Promise.reject(new RedisClientNotConnectedError(this.description));
    this.connecting ??= this.target.connect().then(
      () => {
        this.connecting = undefined;
      },
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }

  /** Closes a connection the library made (waiting a second at most for replies in flight); a user's stays open. */
  async close(): Promise<void> {
    if (!this.owned || this.closed) return;
    this.closed = true;
    if (this.target.isOpen && this.target.close)
      await settleWithin(
        systemClock,
        this.target.close().catch(() => undefined),
        1000,
        () => undefined,
      );
    if (this.target.isOpen) this.target.destroy?.();
  }

  disconnect(): void {
    if (!this.owned) return;
    this.closed = true;
    if (this.target.isOpen) this.target.destroy?.();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    const source = this.eventOf(event);
    if (!source) return;
    const { accept } = source;
    const wrapper = (...args: unknown[]): void => {
      if (accept && !accept(...args)) return;
      // node-redis' sentinel reports some errors as text.
      if (event === 'error') listener(args[0] instanceof Error ? args[0] : new Error(String(args[0])));
      else listener();
    };
    this.target.on(source.name, wrapper);
    const registered = this.listeners.get(listener) ?? [];
    registered.push({ name: source.name, wrapper });
    this.listeners.set(listener, registered);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    const source = this.eventOf(event);
    const registered = this.listeners.get(listener);
    const index = registered?.findIndex((entry) => entry.name === source?.name) ?? -1;
    if (index < 0) return;
    this.target.off(registered![index]!.name, registered![index]!.wrapper);
    registered!.splice(index, 1);
    if (registered!.length === 0) this.listeners.delete(listener);
  }

  /** Takes off every listener this port put on the node-redis object. */
  protected removeListeners(): void {
    for (const [, registered] of this.listeners) for (const { name, wrapper } of registered) this.target.off(name, wrapper);
    this.listeners.clear();
  }

  abstract ping(): Promise<unknown>;

  /** node-redis' event for `event` on this kind of object, or undefined when it has none. */
  protected abstract eventOf(event: ConnectionEvent): NodeRedisEvent | undefined;

  /** A rejection as the library reports it: a closed client says what to do. */
  protected failure(error: unknown): unknown {
    return isErrorClass(error, 'ClientClosedError') ? new RedisClientNotConnectedError(this.description) : error;
  }
}

/**
 * The commands of the port over a node-redis client, cluster or sentinel (see node-redis-kinds.ts),
 * all sent with `sendCommand`, so that replies come back raw, as the scripts' parsers read them: the
 * library's scripts never return Lua booleans, so their replies are the same in RESP2 and RESP3; the
 * one command whose reply differs (HGETALL: a map in RESP3) is read either way.
 */
export abstract class NodeRedisPort extends NodeRedisConnection implements RedisPort {
  abstract readonly native: object;
  readonly groupCommit = true;
  abstract readonly isCluster: boolean;

  /** Sends `args`, routed by `key` in a cluster (keyless: any node). */
  protected abstract send(key: string | undefined, args: readonly string[]): Promise<unknown>;

  abstract masters(): Promise<readonly RedisCommands[]>;
  abstract subscriber(): PubSubPort;

  runScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown> {
    const args: string[] = ['EVALSHA', script.sha, String(keys.length), ...keys];
    for (const arg of argv) args.push(typeof arg === 'string' ? arg : String(arg));
    const key = keys[0];
    return this.send(key, args).catch((error: unknown) => {
      if (!isNoScript(error)) throw this.failure(error);
      args[0] = 'EVAL';
      args[1] = script.lua;
      return this.send(key, args);
    });
  }

  ping(): Promise<unknown> {
    return this.command(undefined, ['PING']);
  }

  async time(): Promise<readonly (string | number)[]> {
    return (await this.command(undefined, ['TIME'])) as (string | number)[];
  }

  async get(key: string): Promise<string | null> {
    return (await this.command(key, ['GET', key])) as string | null;
  }

  async exists(key: string): Promise<number> {
    return Number(await this.command(key, ['EXISTS', key]));
  }

  async pttl(key: string): Promise<number> {
    return Number(await this.command(key, ['PTTL', key]));
  }

  async zcard(key: string): Promise<number> {
    return Number(await this.command(key, ['ZCARD', key]));
  }

  async hmget(key: string, fields: readonly string[]): Promise<(string | null)[]> {
    return (await this.command(key, ['HMGET', key, ...fields])) as (string | null)[];
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return asRecord(await this.command(key, ['HGETALL', key]));
  }

  hset(key: string, pairs: readonly string[]): Promise<unknown> {
    return this.command(key, ['HSET', key, ...pairs]);
  }

  pexpire(key: string, ms: number): Promise<unknown> {
    return this.command(key, ['PEXPIRE', key, String(ms)]);
  }

  del(key: string): Promise<unknown> {
    return this.command(key, ['DEL', key]);
  }

  /** WAIT has no key of its own: `key` routes it (a cluster) to the master that took the writes, on the connection that sent them. */
  async waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    return Number(await this.command(key, ['WAIT', String(replicas), String(timeoutMs)]));
  }

  serverCommand(args: readonly string[]): Promise<unknown> {
    return this.command(undefined, args);
  }

  isReplyError(error: unknown): boolean {
    return isErrorClass(error, 'ErrorReply');
  }

  async scan(cursor: string, match: string, count: number): Promise<[string, string[]]> {
    const [next, keys] = (await this.command(undefined, ['SCAN', cursor, 'MATCH', match, 'COUNT', String(count)])) as [unknown, string[]];
    return [String(next), keys];
  }

  private command(key: string | undefined, args: readonly string[]): Promise<unknown> {
    return this.send(key, args).catch((error: unknown) => {
      throw this.failure(error);
    });
  }
}
