// Types of scripts/servers.mjs, for the test harness (test/harness/servers.ts).

/** The servers of the table (SERVERS), by the directory under .cache/ each is fetched into. */
export type ServerId = 'redis-6.0' | 'redis-8.0' | 'valkey-8.1' | 'valkey-9';

export interface ServerEntry {
  readonly id: ServerId;
  readonly product: 'Redis' | 'Valkey';
  /** The release line expected: '6.0', '9'. */
  readonly version: string;
  /** The Debian suite it comes from. */
  readonly suite: string;
  /** The wrapper's name: redis-server or valkey-server. */
  readonly program: string;
  readonly binary: string;
  readonly libc: 'system' | 'suite';
  /** It has SPUBLISH/SSUBSCRIBE: a cluster of it gets sharded unlock notifications. */
  readonly shardedPubSub: boolean;
  readonly packages: readonly string[];
}

export declare const SERVERS: readonly ServerEntry[];
export declare function serverDir(server: ServerEntry): string;
export declare function serverBin(server: ServerEntry): string;
export declare function matchVersion(server: ServerEntry, output: string | undefined): string | undefined;
