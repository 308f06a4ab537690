import type { Cluster, Redis } from 'ioredis';
import { systemClock } from '../util/clock.js';
import { settleWithin } from '../util/late-timer.js';
import { isNoScript } from './reply-errors.js';
import type { ConnectionEvent, ConnectionStatus, PubSubPort, RedisCommands, RedisPort, ScriptSource } from './redis-port.js';

/**
 * The part of ioredis' `Redis` and `Cluster` used here, as one type (their intersection is unusable,
 * and their overloads of evalsha/eval/hset are beyond use with argument arrays). iovalkey and the
 * in-memory store answer it too.
 */
interface IoredisLike {
  readonly isCluster: boolean;
  readonly status: string;
  evalsha(sha: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
  eval(lua: string, keys: number, ...args: (string | number)[]): Promise<unknown>;
  ping(): Promise<unknown>;
  time(): Promise<(string | number)[]>;
  get(key: string): Promise<string | null>;
  exists(key: string): Promise<number>;
  pttl(key: string): Promise<number>;
  zcard(key: string): Promise<number>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hgetall(key: string): Promise<Record<string, string>>;
  hset(key: string, ...pairs: string[]): Promise<unknown>;
  pexpire(key: string, ms: number): Promise<unknown>;
  del(key: string): Promise<unknown>;
  wait(replicas: number, timeoutMs: number): Promise<number>;
  scan(cursor: string, ...options: (string | number)[]): Promise<[string, string[]]>;
  /** ioredis' generic command; the in-memory store has its methods only (see serverCommand). */
  call?(command: string, ...args: string[]): Promise<unknown>;
  connect(): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

/** Closes an ioredis connection politely (QUIT), or at once if it is not connected or does not answer within a second. */
async function closeIoredis(redis: IoredisLike): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await settleWithin(systemClock, redis.quit(), 1000, () => undefined);
  } catch {
    // QUIT failed: the connection is going away anyway; disconnect below makes sure of it.
  } finally {
    redis.disconnect();
  }
}

/** The life cycle of an ioredis connection, shared by the command and the subscriber side. */
abstract class IoredisConnection {
  readonly driver = 'ioredis' as const;

  constructor(protected readonly redis: IoredisLike) {}

  get status(): ConnectionStatus {
    return this.redis.status as ConnectionStatus;
  }

  async connect(): Promise<void> {
    await this.redis.connect();
  }

  ping(): Promise<unknown> {
    return this.redis.ping();
  }

  close(): Promise<void> {
    return closeIoredis(this.redis);
  }

  disconnect(): void {
    this.redis.disconnect();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.redis.on(event, listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.redis.off(event, listener);
  }
}

/**
 * An ioredis `Redis` or `Cluster` (or iovalkey's, or a client that answers ioredis' API, as the
 * in-memory store does) behind the port. `groupCommit`: see RedisPort.
 */
export class IoredisPort extends IoredisConnection implements RedisPort {
  constructor(
    client: Redis | Cluster | object,
    readonly groupCommit = true,
  ) {
    super(client as unknown as IoredisLike);
  }

  get native(): object {
    return this.redis;
  }

  get isCluster(): boolean {
    return this.redis.isCluster;
  }

  runScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown> {
    const redis = this.redis;
    return redis.evalsha(script.sha, keys.length, ...keys, ...argv).catch((error: unknown) => {
      if (isNoScript(error)) return redis.eval(script.lua, keys.length, ...keys, ...argv);
      throw error;
    });
  }

  time(): Promise<readonly (string | number)[]> {
    return this.redis.time();
  }

  get(key: string): Promise<string | null> {
    return this.redis.get(key);
  }

  exists(key: string): Promise<number> {
    return this.redis.exists(key);
  }

  pttl(key: string): Promise<number> {
    return this.redis.pttl(key);
  }

  zcard(key: string): Promise<number> {
    return this.redis.zcard(key);
  }

  hmget(key: string, fields: readonly string[]): Promise<(string | null)[]> {
    return this.redis.hmget(key, ...fields);
  }

  hgetall(key: string): Promise<Record<string, string>> {
    return this.redis.hgetall(key);
  }

  hset(key: string, pairs: readonly string[]): Promise<unknown> {
    return this.redis.hset(key, ...pairs);
  }

  pexpire(key: string, ms: number): Promise<unknown> {
    return this.redis.pexpire(key, ms);
  }

  del(key: string): Promise<unknown> {
    return this.redis.del(key);
  }

  /** A cluster's WAIT has no key: it rides in a pipeline behind a read of `key`, which routes it to the master of the key's slot. */
  async waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    if (!this.redis.isCluster) return this.redis.wait(replicas, timeoutMs);
    const results = await (this.redis as unknown as Cluster).pipeline().pttl(key).wait(replicas, timeoutMs).exec();
    const [error, count] = results?.[1] ?? [new Error('no reply to WAIT'), 0];
    if (error) throw error;
    return Number(count);
  }

  serverCommand(args: readonly string[]): Promise<unknown> {
    const [command, ...rest] = args as [string, ...string[]];
    if (this.redis.call) return this.redis.call(command, ...rest);
    // The in-memory store answers the commands the library uses as methods (SCRIPT among them).
    const method = (this.redis as unknown as Record<string, (...values: string[]) => Promise<unknown>>)[command.toLowerCase()];
    return method ? method.apply(this.redis, rest) : Promise.reject(new Error(`ERR unknown command '${command}'`));
  }

  isReplyError(error: unknown): boolean {
    return error instanceof Error && error.name === 'ReplyError';
  }

  scan(cursor: string, match: string, count: number): Promise<[string, string[]]> {
    return this.redis.scan(cursor, 'MATCH', match, 'COUNT', count);
  }

  async masters(): Promise<readonly RedisCommands[]> {
    return this.redis.isCluster ? (this.redis as unknown as Cluster).nodes('master').map((node) => new IoredisPort(node, this.groupCommit)) : [this];
  }

  /** Another connection like this one, for subscriptions; a cluster's keeps a subscriber per shard (ioredis `shardedSubscribers`). */
  subscriber(): PubSubPort {
    const connection = this.redis.isCluster
      ? (this.redis as unknown as Cluster).duplicate(undefined, { shardedSubscribers: true, lazyConnect: true })
      : (this.redis as unknown as Redis).duplicate({ lazyConnect: true });
    return new IoredisSubscriber(connection);
  }
}

/** The subscription side of ioredis' API, plain and sharded. */
interface IoredisSubscriberLike extends IoredisLike {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  ssubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;
  readonly shardedSubscribers?: unknown;
}

/** An ioredis connection used for subscriptions only. */
export class IoredisSubscriber extends IoredisConnection implements PubSubPort {
  private readonly pubsub: IoredisSubscriberLike;

  constructor(connection: Redis | Cluster | object) {
    super(connection as unknown as IoredisLike);
    this.pubsub = connection as unknown as IoredisSubscriberLike;
  }

  /** ioredis' Cluster made with `shardedSubscribers` keeps one subscriber per shard; iovalkey's and older ones subscribe through one node. */
  get shardedEverywhere(): boolean {
    return this.pubsub.isCluster && this.pubsub.shardedSubscribers != null;
  }

  subscribe(channel: string, sharded: boolean): Promise<unknown> {
    return sharded ? this.pubsub.ssubscribe(channel) : this.pubsub.subscribe(channel);
  }

  unsubscribe(channel: string, sharded: boolean): Promise<unknown> {
    return sharded ? this.pubsub.sunsubscribe(channel) : this.pubsub.unsubscribe(channel);
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    // Only the chosen kind is ever subscribed, so only its messages arrive.
    const deliver = (channel: string, message: string): void => listener(channel, String(message));
    this.pubsub.on('message', deliver);
    this.pubsub.on('smessage', deliver);
  }

  onResubscribed(listener: (shardedOnly: boolean) => void): void {
    this.pubsub.on('ready', () => listener(false));
    // A cluster re-subscribes sharded channels on the slots' new masters after a failover or a
    // resharding, without a reconnect: messages published meanwhile were lost.
    this.pubsub.on('subscribersReady', () => listener(true));
  }
}
