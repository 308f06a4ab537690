import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { RedisTarget } from '../adapters/adapter.js';
import { percentile } from '../stats.js';
import type { RunOutcome } from './scenario.js';

const APP = fileURLToPath(new URL('./decorator-app.js', import.meta.url));

/** The three routes of the app, in the order each round runs them. */
export const DECORATOR_ROUTES = ['plain', 'locked', 'watchdog'] as const;
export type DecoratorRoute = (typeof DECORATOR_ROUTES)[number];

interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
  on(event: 'done', listener: (result: { non2xx: number; errors: number; timeouts: number }) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
}
type Autocannon = (options: Record<string, unknown>) => AutocannonInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Settings of the load, written into the results. */
export const DECORATOR_LOAD = { connections: 1, pipelining: 1, tool: 'autocannon (idReplacement: one new id, so one new lock name, per request)' };

/** The Nest app of the decorator scenario, in a child process for the whole benchmark. */
export class DecoratorApp {
  private child: ChildProcess | undefined;
  private port = 0;
  private readonly log: string[] = [];

  async start(target: RedisTarget): Promise<void> {
    const child = fork(APP, [], {
      env: { ...process.env, BENCH_REDIS_HOST: target.host, BENCH_REDIS_PORT: String(target.port) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child = child;
    const keep = (chunk: Buffer): void => {
      this.log.push(chunk.toString());
      if (this.log.length > 50) this.log.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the decorator app did not start within 60 s: ${this.log.join('')}`)), 60_000);
      child.once('message', (message: { port: number }) => {
        clearTimeout(timer);
        resolve(message.port);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the decorator app exited (${code}) during start-up: ${this.log.join('')}`));
      });
    });
  }

  /** Runs one route under a closed loop of `connections` for `durationMs`; latencies are per request (float ms). */
  async load(route: DecoratorRoute, durationMs: number): Promise<RunOutcome> {
    const latencies: number[] = [];
    const result = await new Promise<{ non2xx: number; errors: number; timeouts: number }>((resolve, reject) => {
      const instance = autocannon({
        url: `http://127.0.0.1:${this.port}/${route}/[<id>]`,
        idReplacement: true,
        connections: DECORATOR_LOAD.connections,
        pipelining: DECORATOR_LOAD.pipelining,
        duration: durationMs / 1000,
      });
      instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTimeMs);
      });
      instance.on('done', resolve);
      instance.on('error', reject);
    });
    const failures = result.non2xx + result.errors + result.timeouts;
    return {
      metrics: {
        requestsPerSec: (latencies.length / durationMs) * 1000,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        requests: latencies.length,
      },
      errors: failures ? { errors: failures, firstError: `${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts` } : { errors: 0 },
    };
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }

  killNow(): void {
    this.child?.kill('SIGKILL');
  }
}
