import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';

export interface RedisServerOptions {
  /** Extra `redis-server` arguments, e.g. ['--requirepass', 'secret']. */
  args?: string[];
  /** Run `redis-server --sentinel` instead of a data server. */
  sentinel?: boolean;
  /** Reuse a port (restart on the same address). */
  port?: number;
  /**
   * The redis-server executable: a path, or a name looked up on PATH. Default: the environment
   * variable REDIS_SERVER_BIN, else `redis-server` (e.g. a Redis 6 binary for compatibility tests).
   */
  bin?: string;
}

const READY_PATTERNS = [/Ready to accept connections/, /Sentinel ID is/];
const running = new Set<RedisServer>();

/**
 * A redis-server process on a free 127.0.0.1 port, started by the test and stopped by it. Readiness
 * is read from the server's own log line, never guessed with a sleep.
 */
export class RedisServer {
  private process: ChildProcess | undefined;
  private readonly log: string[] = [];
  private exited: Promise<void> = Promise.resolve();
  private readonly clients = new Set<Redis>();

  private constructor(
    readonly port: number,
    private readonly options: RedisServerOptions,
    private readonly dir: string,
  ) {}

  readonly host = '127.0.0.1';

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    for (let attempt = 0; ; attempt++) {
      const port = options.port ?? (await freePort());
      const server = new RedisServer(port, options, mkdtempSync(join(tmpdir(), 'dlock-redis-')));
      try {
        await server.launch();
        return server;
      } catch (error) {
        await server.stop();
        // Someone took the port between our probe and the bind: try another (unless it was fixed).
        if (options.port !== undefined || attempt >= 4) throw error;
      }
    }
  }

  get url(): string {
    return `redis://${this.host}:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.pid;
  }

  get isRunning(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  /**
   * A plain ioredis client for assertions. It belongs to the server: `stop()` disconnects it, so a
   * test that fails half-way cannot leave a reconnecting client behind to keep Jest alive.
   */
  client(options: Record<string, unknown> = {}): Redis {
    const client = new Redis({ host: this.host, port: this.port, maxRetriesPerRequest: 1, ...options });
    this.clients.add(client);
    client.once('end', () => this.clients.delete(client));
    return client;
  }

  private launch(): Promise<void> {
    const configArgs = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--logfile', '', '--daemonize', 'no', '--protected-mode', 'no'];
    const args = this.options.sentinel
      ? [join(this.dir, 'sentinel.conf'), '--sentinel', ...configArgs, ...(this.options.args ?? [])]
      : // A master starts a full sync at once: by default it waits 5 s for more replicas to share one transfer.
        ['--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0', ...configArgs, ...(this.options.args ?? [])];
    if (this.options.sentinel) {
      // Sentinel rewrites its config file, so it needs a writable one of its own; monitors are added
      // with SENTINEL MONITOR once it runs.
      writeFileSync(join(this.dir, 'sentinel.conf'), '');
    }
    const bin = this.options.bin ?? (process.env.REDIS_SERVER_BIN || 'redis-server');
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.process = child;
    running.add(this);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    return new Promise((resolve, reject) => {
      let ready = false;
      const onData = (chunk: Buffer): void => {
        for (const line of chunk.toString().split('\n')) {
          if (!line) continue;
          this.log.push(line);
          if (this.log.length > 200) this.log.shift();
          if (!ready && READY_PATTERNS.some((pattern) => pattern.test(line))) {
            ready = true;
            resolve();
          }
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (error) => reject(new Error(`cannot start ${bin} (is it installed? run npm run setup): ${error.message}`)));
      child.once('exit', (code, signal) => {
        if (!ready) reject(new Error(`redis-server on port ${this.port} exited (${code ?? signal}) before it was ready:\n${this.log.join('\n')}`));
      });
    });
  }

  /** Last lines the server logged (for failure messages). */
  recentLog(): string {
    return this.log.join('\n');
  }

  /** Stops the server (SIGTERM, SIGKILL after 5 s), waits for it to exit, and disconnects assertion clients. */
  async stop(): Promise<void> {
    for (const client of this.clients) client.disconnect();
    this.clients.clear();
    await this.stopProcess();
  }

  private async stopProcess(): Promise<void> {
    const child = this.process;
    if (child && this.isRunning) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await this.exited;
      clearTimeout(timer);
    }
    running.delete(this);
    this.process = undefined;
  }

  /** Kills the server at once, as a crash would. */
  async kill(): Promise<void> {
    const child = this.process;
    if (child && this.isRunning) {
      child.kill('SIGKILL');
      await this.exited;
    }
  }

  /** Stops it and starts it again on the same port, with an empty dataset (no persistence). */
  async restart(): Promise<void> {
    await this.stopProcess();
    await this.launch();
  }

  /** Synchronous last resort for process exit. */
  killNow(): void {
    if (this.isRunning) this.process?.kill('SIGKILL');
  }

  /** Freezes / thaws the server process (SIGSTOP / SIGCONT). */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Removes the server's working directory (after stop). */
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Stops every server still running (afterAll safety net; also on process exit). */
export async function stopAllRedisServers(): Promise<void> {
  await Promise.all(
    [...running].map(async (server) => {
      await server.stop();
      server.cleanup();
    }),
  );
}

process.once('exit', () => {
  for (const server of running) server.killNow();
});
