import { Redis } from 'ioredis';
import { RedisServer } from 'redis-topology';
import type { RedisTarget } from './adapters/index.js';

/**
 * The throwaway redis-server a benchmark run measures on (a free 127.0.0.1 port, no persistence),
 * with the run's own admin connection for FLUSHDB, INFO and the checks; stopped with the run.
 */
export class BenchServer {
  private constructor(
    private readonly server: RedisServer,
    /** The run's admin connection (named, so the scaling set can leave it out of its client counts). */
    readonly admin: Redis,
    readonly target: RedisTarget,
  ) {}

  /** `bin`: the server's executable (default: redis-server on PATH, or REDIS_SERVER_BIN). */
  static async start(connectionName?: string, bin?: string): Promise<BenchServer> {
    const server = await RedisServer.start(bin ? { bin } : {});
    const target: RedisTarget = { host: server.host, port: server.port };
    const admin = new Redis({ host: target.host, port: target.port, ...(connectionName ? { connectionName } : {}) });
    await admin.ping();
    return new BenchServer(server, admin, target);
  }

  /** The server's version as 'Redis 7.0.15' or 'Valkey 9.1.2' (Valkey also reports a redis_version, 7.2.4, for clients). */
  async version(): Promise<string> {
    const info = await this.admin.info('server');
    const valkey = /valkey_version:(\S+)/.exec(info)?.[1];
    return valkey ? `Valkey ${valkey}` : `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'}`;
  }

  async stop(): Promise<void> {
    this.admin.disconnect();
    await this.server.stop();
    this.server.cleanup();
  }

  /** At process exit: kills the server synchronously. */
  killNow(): void {
    this.server.killNow();
  }
}
