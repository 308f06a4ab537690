import type { ScriptKeysError } from '../core/errors/script-keys.error.js';
import { systemClock, type Clock } from '../core/util/clock.js';
import { formatDouble } from './redis-number.js';

/**
 * The data of an in-memory lock store: the few Redis types the lock scripts use (strings, hashes,
 * sorted sets, plus lists for tests' own bookkeeping), with Redis's expiry rules, and a pub/sub bus.
 * Every method is synchronous, so that a script made of several calls runs atomically, as in Redis.
 * Time is the monotonic clock of this process.
 */
interface Types {
  string: string;
  hash: Map<string, string>;
  zset: Map<string, number>;
  list: string[];
}
type TypeName = keyof Types;

interface Entry {
  type: TypeName;
  value: Types[TypeName];
  /** Monotonic ms after which the key is gone; undefined: no expiry. */
  expiresAt: number | undefined;
}

/** Receives messages published on channels it subscribed to. */
export interface MemorySubscriber {
  deliver(channel: string, message: string): void;
}

const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** A score bound of ZRANGEBYSCORE / ZCOUNT: `-inf`, `+inf`, `5` or `(5` (exclusive). */
function parseBound(bound: string | number): { value: number; exclusive: boolean } {
  const text = String(bound);
  const exclusive = text.startsWith('(');
  const raw = exclusive ? text.slice(1) : text;
  const value = raw === '-inf' ? -Infinity : raw === '+inf' || raw === 'inf' ? Infinity : Number(raw);
  if (Number.isNaN(value)) throw new Error('ERR min or max is not a float');
  return { value, exclusive };
}

/** The elements from `start` to `stop` inclusive, negative indexes counted from the end (ZRANGE, LRANGE). */
function rangeOf<T>(items: T[], start: number, stop: number): T[] {
  const from = start < 0 ? Math.max(0, items.length + start) : start;
  const to = stop < 0 ? items.length + stop : Math.min(stop, items.length - 1);
  return from > to ? [] : items.slice(from, to + 1);
}

/**
 * Runs `fn` once the current synchronous code is done, through a resolved promise rather than
 * queueMicrotask, which Jest's fake timers replace (a message would then wait for the test to advance
 * the clock).
 */
/** A range of a sorted set as Redis replies it: members, or member, score, member, score... */
function rangeReply(entries: [string, number][], withScores: boolean): string[] {
  return withScores ? entries.flatMap(([member, score]) => [member, formatDouble(score)]) : entries.map(([member]) => member);
}

export function afterThisTask(fn: () => void): void {
  void Promise.resolve().then(fn);
}

function toInteger(value: string | number, what = 'value'): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new Error(`ERR ${what} is not an integer or out of range`);
  return number;
}

export class MemoryKeyspace {
  private readonly entries = new Map<string, Entry>();
  private readonly channels = new Map<string, Set<MemorySubscriber>>();
  /** Script runs since the last `resetStats()` (what Redis counts as EVAL/EVALSHA calls). */
  scriptCalls = 0;
  /** The script cache (SCRIPT LOAD, EVAL): Lua text by SHA1, shared by every connection, kept by FLUSHALL. */
  readonly scripts = new Map<string, string>();
  /**
   * Every script the store refused under strict keys (InMemoryLockStoreOptions.strictKeys), in order,
   * shared by every connection: a test asserts it is empty, since the library may swallow the error
   * of background work (a renewal, a release retried) and only report it in an event. Splice it to clear.
   */
  readonly scriptKeyViolations: ScriptKeysError[] = [];

  /**
   * `clock`: what expires keys (its monotonic `now`) and what TIME answers (its `wallNow`, as the
   * server's own clock).
   */
  constructor(private readonly clock: Clock = systemClock) {}

  /** The latest TIME answered: the server's clock as the scripts see it never goes back. */
  private lastServerMs = -Infinity;

  now(): number {
    return this.clock.now();
  }

  /** Milliseconds of the server's wall clock (Redis TIME, as the scripts use it). */
  serverTimeMs(): number {
    this.lastServerMs = Math.max(this.lastServerMs, Math.floor(this.clock.wallNow()));
    return this.lastServerMs;
  }

  // --- keys -------------------------------------------------------------------------------------

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // Redis: a key is expired once the clock is past its expiry time.
    if (entry.expiresAt !== undefined && this.clock.now() > entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private read<T extends TypeName>(key: string, type: T): Types[T] | undefined {
    const entry = this.live(key);
    if (!entry) return undefined;
    if (entry.type !== type) throw new Error(WRONGTYPE);
    return entry.value as Types[T];
  }

  private write<T extends TypeName>(key: string, type: T, create: () => Types[T]): Types[T] {
    const existing = this.read(key, type);
    if (existing !== undefined) return existing;
    const value = create();
    this.entries.set(key, { type, value, expiresAt: undefined });
    return value;
  }

  /** Redis deletes a hash, sorted set or list when its last element goes. */
  private dropIfEmpty(key: string, size: number): void {
    if (size === 0) this.entries.delete(key);
  }

  exists(...keys: string[]): number {
    return keys.filter((key) => this.live(key) !== undefined).length;
  }

  del(...keys: string[]): number {
    let deleted = 0;
    for (const key of keys) {
      if (this.live(key)) {
        this.entries.delete(key);
        deleted++;
      }
    }
    return deleted;
  }

  pexpire(key: string, ms: string | number): number {
    const entry = this.live(key);
    if (!entry) return 0;
    const duration = toInteger(ms);
    if (duration <= 0) {
      this.entries.delete(key);
      return 1;
    }
    entry.expiresAt = this.clock.now() + duration;
    return 1;
  }

  /** -2: no such key; -1: no expiry; else whole milliseconds left (a live key never reads 0 early). */
  pttl(key: string): number {
    const entry = this.live(key);
    if (!entry) return -2;
    if (entry.expiresAt === undefined) return -1;
    return Math.max(0, Math.ceil(entry.expiresAt - this.clock.now()));
  }

  /** TYPE: 'none' for a key that does not exist. */
  type(key: string): string {
    return this.live(key)?.type ?? 'none';
  }

  keys(): string[] {
    return [...this.entries.keys()].filter((key) => this.live(key) !== undefined);
  }

  flushall(): void {
    this.entries.clear();
  }

  /**
   * Every word `key` holds: its members, fields and values, and what follows the first ':' of each
   * field (the owner id in `r:<owner>`). For a cheap look for a name before a precise read (the
   * simulator's checks use it).
   */
  words(key: string): Set<string> {
    const words = new Set<string>();
    const entry = this.live(key);
    if (!entry) return words;
    const { value } = entry;
    if (typeof value === 'string') words.add(value);
    else if (Array.isArray(value)) for (const item of value) words.add(item);
    else {
      for (const [field, item] of value) {
        words.add(field);
        const colon = field.indexOf(':');
        if (colon >= 0) words.add(field.slice(colon + 1));
        if (typeof item === 'string') words.add(item);
      }
    }
    return words;
  }

  /**
   * A copy of the data as it is now (expiry times included; subscriptions and scripts not), on the same
   * clock: what a replica has when replication stopped at this instant.
   */
  copy(): MemoryKeyspace {
    const copy = new MemoryKeyspace(this.clock);
    for (const key of this.keys()) {
      const { type, value, expiresAt } = this.entries.get(key)!;
      const cloned = value instanceof Map ? new Map<string, string | number>(value as Map<string, string | number>) : Array.isArray(value) ? [...value] : value;
      copy.entries.set(key, { type, value: cloned, expiresAt } as Entry);
    }
    copy.lastServerMs = this.lastServerMs;
    return copy;
  }

  // --- strings ----------------------------------------------------------------------------------

  get(key: string): string | null {
    return this.read(key, 'string') ?? null;
  }

  /** SET key value [PX ms] [NX]: overwriting clears any expiry, as in Redis. Null when NX refused. */
  set(key: string, value: string, options: { px?: number; nx?: boolean } = {}): 'OK' | null {
    if (options.nx && this.live(key)) return null;
    this.entries.set(key, { type: 'string', value, expiresAt: options.px === undefined ? undefined : this.clock.now() + options.px });
    return 'OK';
  }

  incrby(key: string, by: number): number {
    const entry = this.live(key);
    if (entry && entry.type !== 'string') throw new Error(WRONGTYPE);
    const next = toInteger(entry ? (entry.value as string) : 0) + by;
    if (entry) entry.value = String(next);
    else this.entries.set(key, { type: 'string', value: String(next), expiresAt: undefined });
    return next;
  }

  incr(key: string): number {
    return this.incrby(key, 1);
  }

  // --- hashes -----------------------------------------------------------------------------------

  hget(key: string, field: string): string | null {
    return this.read(key, 'hash')?.get(field) ?? null;
  }

  hmget(key: string, ...fields: string[]): (string | null)[] {
    const hash = this.read(key, 'hash');
    return fields.map((field) => hash?.get(field) ?? null);
  }

  hgetall(key: string): Record<string, string> {
    return Object.fromEntries(this.read(key, 'hash') ?? []);
  }

  /** HGETALL as Redis replies it: field, value, field, value... in insertion order (a small hash's order). */
  hgetallFlat(key: string): string[] {
    return [...(this.read(key, 'hash') ?? [])].flat();
  }

  hexists(key: string, field: string): number {
    return this.read(key, 'hash')?.has(field) ? 1 : 0;
  }

  /** HSET key field value [field value ...]: the number of new fields. */
  hset(key: string, ...pairs: (string | number)[]): number {
    if (pairs.length === 0 || pairs.length % 2 !== 0) throw new Error("ERR wrong number of arguments for 'hset' command");
    const hash = this.write(key, 'hash', () => new Map());
    let added = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const field = String(pairs[i]);
      if (!hash.has(field)) added++;
      hash.set(field, String(pairs[i + 1]));
    }
    return added;
  }

  hincrby(key: string, field: string, by: number): number {
    const hash = this.write(key, 'hash', () => new Map());
    const next = toInteger(hash.get(field) ?? 0, 'hash value') + by;
    hash.set(field, String(next));
    return next;
  }

  hdel(key: string, ...fields: string[]): number {
    const hash = this.read(key, 'hash');
    if (!hash) return 0;
    const deleted = fields.filter((field) => hash.delete(field)).length;
    this.dropIfEmpty(key, hash.size);
    return deleted;
  }

  // --- sorted sets ------------------------------------------------------------------------------

  /** Members ordered by score, then by member (byte order), as Redis orders them. */
  private sorted(key: string): [string, number][] {
    const zset = this.read(key, 'zset');
    if (!zset) return [];
    return [...zset].sort(([a, sa], [b, sb]) => sa - sb || (a < b ? -1 : a > b ? 1 : 0));
  }

  zadd(key: string, score: string | number, member: string): number {
    const value = Number(score);
    if (Number.isNaN(value)) throw new Error('ERR value is not a valid float');
    const zset = this.write(key, 'zset', () => new Map());
    const added = zset.has(member) ? 0 : 1;
    zset.set(member, value);
    return added;
  }

  zrem(key: string, ...members: string[]): number {
    const zset = this.read(key, 'zset');
    if (!zset) return 0;
    const removed = members.filter((member) => zset.delete(member)).length;
    this.dropIfEmpty(key, zset.size);
    return removed;
  }

  zscore(key: string, member: string): string | null {
    const score = this.read(key, 'zset')?.get(member);
    return score === undefined ? null : formatDouble(score);
  }

  zcard(key: string): number {
    return this.read(key, 'zset')?.size ?? 0;
  }

  /** ZRANGE key start stop [WITHSCORES], with negative indexes counted from the end. */
  zrange(key: string, start: number, stop: number, withScores = false): string[] {
    return rangeReply(rangeOf(this.sorted(key), start, stop), withScores);
  }

  private inRange(score: number, min: string | number, max: string | number): boolean {
    const low = parseBound(min);
    const high = parseBound(max);
    return (low.exclusive ? score > low.value : score >= low.value) && (high.exclusive ? score < high.value : score <= high.value);
  }

  zrangebyscore(key: string, min: string | number, max: string | number, withScores = false): string[] {
    return rangeReply(
      this.sorted(key).filter(([, score]) => this.inRange(score, min, max)),
      withScores,
    );
  }

  zcount(key: string, min: string | number, max: string | number): number {
    return this.zrangebyscore(key, min, max).length;
  }

  // --- lists (not used by the lock scripts; for the application's and tests' own data) ---------

  rpush(key: string, ...values: string[]): number {
    const list = this.write(key, 'list', () => []);
    list.push(...values);
    return list.length;
  }

  lpush(key: string, ...values: string[]): number {
    const list = this.write(key, 'list', () => []);
    list.unshift(...values.reverse());
    return list.length;
  }

  llen(key: string): number {
    return this.read(key, 'list')?.length ?? 0;
  }

  lrange(key: string, start: number, stop: number): string[] {
    return rangeOf(this.read(key, 'list') ?? [], start, stop);
  }

  // --- pub/sub ----------------------------------------------------------------------------------

  /** @internal A connection of this keyspace follows `channel` (SUBSCRIBE). */
  subscribe(channel: string, subscriber: MemorySubscriber): void {
    let subscribers = this.channels.get(channel);
    if (!subscribers) {
      subscribers = new Set();
      this.channels.set(channel, subscribers);
    }
    subscribers.add(subscriber);
  }

  /** @internal */
  unsubscribe(channel: string, subscriber: MemorySubscriber): void {
    const subscribers = this.channels.get(channel);
    if (!subscribers) return;
    subscribers.delete(subscriber);
    if (subscribers.size === 0) this.channels.delete(channel);
  }

  /** Connections subscribed to `channel` (PUBSUB NUMSUB). */
  numsub(channel: string): number {
    return this.channels.get(channel)?.size ?? 0;
  }

  /** Delivers after the current command (or script) has finished, like a message on another socket. */
  publish(channel: string, message: string): number {
    const subscribers = [...(this.channels.get(channel) ?? [])];
    if (subscribers.length > 0) {
      afterThisTask(() => {
        for (const subscriber of subscribers) subscriber.deliver(channel, message);
      });
    }
    return subscribers.length;
  }
}
