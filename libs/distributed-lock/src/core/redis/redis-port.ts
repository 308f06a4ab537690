/**
 * The one port between the core and a Redis client library. Everything above `core/redis/` talks to
 * Redis through these interfaces; `ioredis.port.ts` and `node-redis.port.ts` implement them over
 * ioredis (and iovalkey, and the in-memory store, which answer ioredis' API) and node-redis.
 *
 * What the core needs is small: run its own scripts by SHA (with an EVAL fallback), a few plain
 * commands (reads of lock state for `isLocked` and friends, the server's clock, WAIT, the inspection
 * registration, SCAN), a connection's life cycle, and a subscriber connection. Every reply comes back
 * as ioredis gives it in RESP2 (the shape the scripts' parsers were written for): integers as numbers,
 * bulk strings as strings, nil as null, an error inside an array as an Error.
 */

/** Which client library a port drives ('port': a port the client brought itself, see PortedClient). */
export type RedisDriver = 'ioredis' | 'node-redis' | 'valkey-glide' | 'port';

/**
 * A connection's state, in ioredis' words (node-redis' `isOpen`/`isReady` are mapped onto them):
 * `wait` not connected yet (lazy), `ready` answering, `end` closed for good; the others are on the way.
 */
export type ConnectionStatus = 'wait' | 'connecting' | 'connect' | 'ready' | 'reconnecting' | 'close' | 'end';

/** The connection events the core listens to. */
export type ConnectionEvent = 'ready' | 'error' | 'end';

/** A script as LockNode and FencedResource send it: its text, and the SHA1 of that text. */
export interface ScriptSource {
  readonly sha: string;
  readonly lua: string;
}

/** A connection's life cycle, as start-up, revival, health checks and close use it. */
export interface RedisConnection {
  readonly driver: RedisDriver;
  readonly status: ConnectionStatus;
  /** PING: proves the connection at start-up and in health checks. */
  ping(): Promise<unknown>;
  /** Opens a connection made lazily. A client the user brought is never opened here if that client's library expects the user to (node-redis). */
  connect(): Promise<void>;
  /** Closes politely (QUIT or the library's close), within a second, then for sure. */
  close(): Promise<void>;
  /** Closes at once. */
  disconnect(): void;
  on(event: ConnectionEvent, listener: (error?: Error) => void): void;
  off(event: ConnectionEvent, listener: (error?: Error) => void): void;
}

/** The commands the core sends, on one connection (a cluster client routes each by its key). */
export interface RedisCommands {
  readonly driver: RedisDriver;
  /** True for a cluster client: lock keys then carry a hash tag per lock, and SCAN visits every master. */
  readonly isCluster: boolean;
  /**
   * EVALSHA of `script` with `keys` and `argv`; a server that answers NOSCRIPT (restart, failover, new
   * node) gets the script once as EVAL, which also caches it there. The hot path of every lock
   * operation: an adapter adds no promise of its own around the client's (besides the fallback's).
   */
  runScript(script: ScriptSource, keys: readonly string[], argv: readonly (string | number)[]): Promise<unknown>;
  ping(): Promise<unknown>;
  /** TIME: seconds and microseconds. */
  time(): Promise<readonly (string | number)[]>;
  get(key: string): Promise<string | null>;
  exists(key: string): Promise<number>;
  pttl(key: string): Promise<number>;
  zcard(key: string): Promise<number>;
  hmget(key: string, fields: readonly string[]): Promise<(string | null)[]>;
  hgetall(key: string): Promise<Record<string, string>>;
  /** HSET with field, value pairs, flat. */
  hset(key: string, pairs: readonly string[]): Promise<unknown>;
  pexpire(key: string, ms: number): Promise<unknown>;
  del(key: string): Promise<unknown>;
  /** WAIT on the connection that wrote `key` (a cluster: the master of its slot): how many replicas have its writes. */
  waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number>;
  /** A command without a key (COMMAND INFO, INFO, SCRIPT ...) on one node; its raw reply. */
  serverCommand(args: readonly string[]): Promise<unknown>;
  /** Whether `error` is the server's refusal of a command (an error reply), not a network failure or a timeout. */
  isReplyError(error: unknown): boolean;
  /** One SCAN step on this node (not routed: see `masters`). */
  scan(cursor: string, match: string, count: number): Promise<[cursor: string, keys: string[]]>;
  /** The nodes a SCAN or a health check must visit: every master of a cluster, else this connection. */
  masters(): Promise<readonly RedisCommands[]>;
}

/** A connection that runs the core's commands: what a LockNode, an inspection or a fenced resource is given. */
export interface RedisPort extends RedisCommands, RedisConnection {
  /** The client object underneath (the user's, or one the library made). */
  readonly native: object;
  /**
   * Whether script calls issued in one turn may travel as one batch script (group commit, see
   * LockNode). A store whose replies need no turn of the event loop (the in-memory store, which Jest's
   * fake timers may run) says false: every call then goes alone, at once; so does a client that fails
   * a whole reply holding an error among its elements (GLIDE), which the batch script's reply may be.
   */
  readonly groupCommit: boolean;
  /**
   * True when the library made this client from settings given in the `client` option (Valkey GLIDE),
   * so that it opens and closes it as it does its own connections; absent for a client the user made.
   */
  readonly madeByLibrary?: boolean;
  /** A connection for subscriptions, made from this one (see PubSubPort); not opened yet. */
  subscriber(): PubSubPort;
}

/** Pub/sub as the unlock notifications need it: plain or sharded channels, and their messages. */
export interface PubSubPort extends RedisConnection {
  /**
   * Whether this connection can subscribe to sharded channels of every slot (a cluster client that
   * keeps a subscriber per shard); when false, sharded pub/sub is not chosen (see PubSubSelector).
   */
  readonly shardedEverywhere: boolean;
  subscribe(channel: string, sharded: boolean): Promise<unknown>;
  unsubscribe(channel: string, sharded: boolean): Promise<unknown>;
  /** Every message of every channel this port subscribed to. */
  onMessage(listener: (channel: string, message: string) => void): void;
  /**
   * After the connection was lost and is subscribed again, or (`shardedOnly`) a cluster's sharded
   * subscriptions moved to a slot's new master: messages published meanwhile were missed.
   */
  onResubscribed(listener: (shardedOnly: boolean) => void): void;
}

/**
 * A client that brings its own port (`options.client`): the in-memory store of
 * `nestjs-distributed-lock/testing`, a simulator's network. The library uses the port it returns and
 * nothing else of the object; that is how a store reaches the library without the library importing it.
 */
export interface PortedClient {
  redisPort(): RedisPort;
}
