import { GlideClientHolder } from './glide-connection.js';
import { glideFailure, isGlideNoScript } from './glide-errors.js';
import { GlideSubscriber } from './glide-subscriber.js';
import { GLIDE_STRING_DECODER, type GlideRoute, type GlideSettingsLike } from './glide.types.js';
import type { ConnectionEvent, ConnectionStatus, PubSubPort, RedisCommands, RedisPort, ScriptSource } from './redis-port.js';

/** Sends one command through a GLIDE client: its arguments, and (a cluster) where to. */
type GlideSend = (args: string[], route: GlideRoute | undefined) => Promise<unknown>;

/** A map reply (HGETALL in RESP3), which GLIDE gives as `[{ key, value }]`, as an object. */
function asRecord(reply: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (Array.isArray(reply)) for (const entry of reply as { key: unknown; value: unknown }[]) record[String(entry.key)] = String(entry.value);
  return record;
}

/** Whether the GLIDE class given makes cluster clients (`GlideClusterClient` has sharded subscriptions). */
export function isGlideClusterClass(settings: GlideSettingsLike): boolean {
  return typeof (settings.glide.prototype as { ssubscribe?: unknown }).ssubscribe === 'function';
}

/**
 * The core's commands over a GLIDE client, all through `customCommand` with string replies, so that
 * replies come as the scripts' parsers read them (integers as numbers, nil as null). On a cluster
 * client a command is routed by its first key (a script's first key carries the lock's hash tag), a
 * keyless one to any node, and, for SCAN and health checks, `masters()` gives a view of each primary
 * (routed by its address).
 *
 * GLIDE fails a whole reply that holds an error among its elements, so the batch script, which
 * answers each call's error in its place, is not used on it (GlidePort's `groupCommit` is false):
 * each call is its own EVALSHA, which GLIDE pipelines on its one multiplexed connection.
 */
export class GlideCommands implements RedisCommands {
  readonly driver = 'valkey-glide' as const;

  constructor(
    private readonly send: GlideSend,
    readonly isCluster: boolean,
    /** One primary of a cluster (see masters()): every command goes there. */
    private readonly node?: GlideRoute,
  ) {}

  runScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown> {
    const args: string[] = ['EVALSHA', script.sha, String(keys.length), ...keys];
    for (const arg of argv) args.push(typeof arg === 'string' ? arg : String(arg));
    const route = this.route(keys[0]);
    return this.send(args, route).catch((error: unknown) => {
      if (!isGlideNoScript(error)) throw error;
      args[0] = 'EVAL';
      args[1] = script.lua;
      return this.send(args, route);
    });
  }

  ping(): Promise<unknown> {
    // A cluster client without a route asks every primary.
    return this.send(['PING'], this.node);
  }

  async time(): Promise<readonly (string | number)[]> {
    return (await this.send(['TIME'], this.route(undefined))) as string[];
  }

  async get(key: string): Promise<string | null> {
    return (await this.send(['GET', key], this.route(key))) as string | null;
  }

  async exists(key: string): Promise<number> {
    return Number(await this.send(['EXISTS', key], this.route(key)));
  }

  async pttl(key: string): Promise<number> {
    return Number(await this.send(['PTTL', key], this.route(key)));
  }

  async zcard(key: string): Promise<number> {
    return Number(await this.send(['ZCARD', key], this.route(key)));
  }

  async hmget(key: string, fields: readonly string[]): Promise<(string | null)[]> {
    return (await this.send(['HMGET', key, ...fields], this.route(key))) as (string | null)[];
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return asRecord(await this.send(['HGETALL', key], this.route(key)));
  }

  hset(key: string, pairs: readonly string[]): Promise<unknown> {
    return this.send(['HSET', key, ...pairs], this.route(key));
  }

  pexpire(key: string, ms: number): Promise<unknown> {
    return this.send(['PEXPIRE', key, String(ms)], this.route(key));
  }

  del(key: string): Promise<unknown> {
    return this.send(['DEL', key], this.route(key));
  }

  /** WAIT, routed by `key` to the primary that took the writes: GLIDE keeps one connection per node, the one that sent them. */
  async waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    return Number(await this.send(['WAIT', String(replicas), String(timeoutMs)], this.route(key)));
  }

  serverCommand(args: readonly string[]): Promise<unknown> {
    return this.send([...args], this.route(undefined));
  }

  isReplyError(error: unknown): boolean {
    return glideFailure(error) === 'reply';
  }

  async scan(cursor: string, match: string, count: number): Promise<[string, string[]]> {
    const [next, keys] = (await this.send(['SCAN', cursor, 'MATCH', match, 'COUNT', String(count)], this.route(undefined))) as [unknown, string[]];
    return [String(next), keys];
  }

  /** A cluster's primaries, from CLUSTER SLOTS (the addresses GLIDE knows them by), each as a view routed to it. */
  async masters(): Promise<readonly RedisCommands[]> {
    if (!this.isCluster || this.node) return [this];
    const slots = (await this.send(['CLUSTER', 'SLOTS'], 'randomNode')) as [unknown, unknown, [string, number, ...unknown[]], ...unknown[]][];
    const primaries = new Map<string, GlideRoute>();
    for (const [, , [host, port]] of slots) primaries.set(`${host}:${port}`, { type: 'routeByAddress', host, port: Number(port) });
    return [...primaries.values()].map((node) => new GlideCommands(this.send, true, node));
  }

  /** Where a command on `key` goes: nowhere in particular on a standalone client; else this view's node, the key's primary, or any node. */
  private route(key: string | undefined): GlideRoute | undefined {
    if (!this.isCluster) return undefined;
    if (this.node) return this.node;
    return key === undefined ? 'randomNode' : { type: 'primarySlotKey', key };
  }
}

/**
 * A lock client's command connection on Valkey GLIDE: a `GlideClient` or `GlideClusterClient` the
 * library creates from the configuration given in the `client` option (with `requestTimeout`, if the
 * configuration has none, set to the operation timeout instead of GLIDE's 250 ms), and closes.
 * Its subscriber is a second client created the same way (GlideSubscriber).
 */
export class GlidePort extends GlideCommands implements RedisPort {
  readonly madeByLibrary = true;
  /** No batch script (see GlideCommands). */
  readonly groupCommit = false;

  constructor(
    private readonly settings: GlideSettingsLike,
    private readonly timeoutMs: number,
    private readonly holder = new GlideClientHolder('Valkey GLIDE client', () =>
      settings.glide.createClient({ ...settings.configuration, requestTimeout: settings.configuration.requestTimeout ?? timeoutMs } as never),
    ),
  ) {
    super(
      (args, route) =>
        holder.run((client) => client.customCommand(args, route === undefined ? { decoder: GLIDE_STRING_DECODER } : { route, decoder: GLIDE_STRING_DECODER })),
      isGlideClusterClass(settings),
    );
  }

  /** The GLIDE client once created (connect()); the settings given before. */
  get native(): object {
    return this.holder.current ?? this.settings;
  }

  get status(): ConnectionStatus {
    return this.holder.status;
  }

  connect(): Promise<void> {
    return this.holder.connect();
  }

  async close(): Promise<void> {
    this.holder.close();
  }

  disconnect(): void {
    this.holder.close();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.holder.on(event, listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.holder.off(event, listener);
  }

  subscriber(): PubSubPort {
    return new GlideSubscriber(this.settings, this.timeoutMs, this.isCluster);
  }
}
