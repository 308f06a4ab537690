/**
 * What every transport's app process shares: a JSON-lines protocol on stdout/stdin (the test's
 * WorkerProcess reads it), a logger that reports every line with its level, the lock module on the
 * Redis the test names (through its fault proxy), and the read-pause-write counter that shows lost
 * updates when two callers run it at once. The apps run from the built library (dist), as users' do.
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, type DynamicModule, type LoggerService } from '@nestjs/common';
import { DistributedLockModule, LockService } from 'nestjs-distributed-lock';
import type { Redis } from 'ioredis';

export type Message = { type: string; [field: string]: unknown };

export function send(message: Message): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Every log line, with its level, as a message: the test checks what the service logged, and at which level. */
export class LineLogger implements LoggerService {
  log(message: unknown, context?: string): void {
    send({ type: 'log', level: 'log', context, message: String(message) });
  }
  error(message: unknown, ...rest: unknown[]): void {
    send({ type: 'log', level: 'error', message: message instanceof Error ? `${message.message}\n${message.stack}` : String(message), rest: rest.map(String) });
  }
  warn(message: unknown, context?: string): void {
    send({ type: 'log', level: 'warn', context, message: String(message) });
  }
  debug(message: unknown, context?: string): void {
    send({ type: 'log', level: 'debug', context, message: String(message) });
  }
  verbose(): void {}
}

/** The lock module on the test's Redis (DISTRIBUTED_LOCK_REDIS_PORT, its fault proxy), with short timeouts so that an outage answers quickly. */
export function lockModule(): DynamicModule {
  return DistributedLockModule.forRoot({
    connection: { mode: 'single', host: '127.0.0.1', port: Number(process.env.DISTRIBUTED_LOCK_REDIS_PORT) },
    operationTimeout: 500,
    shutdownTimeout: '2s',
    env: {},
  });
}

/** Lock names and Redis keys of one test run, so that runs never share state. */
export const RUN = process.env.RUN_ID ?? 'run';

/** Read, pause, write: two callers at once lose an update unless a lock keeps them apart. */
@Injectable()
export class Counter {
  constructor(private readonly locks: LockService) {}

  async increment(which: string, pauseMs = 10): Promise<number> {
    const key = `${RUN}:counter:${which}`;
    const value = Number((await (this.locks.redis as Redis).get(key)) ?? 0);
    await new Promise((resolve) => setTimeout(resolve, pauseMs)); // the work between read and write
    await (this.locks.redis as Redis).set(key, value + 1);
    return value + 1;
  }
}

/**
 * Reports `ready` (with `details`), then serves stdin commands: `close` closes the app (the process
 * must then exit by itself: nothing may keep it alive), others go to `commands`.
 */
export async function serve(
  app: { close(): Promise<void> },
  details: Record<string, unknown>,
  commands: Record<string, () => Promise<Message>> = {},
): Promise<void> {
  send({ type: 'ready', ...details });
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line === 'close') break;
    const command = commands[line];
    send(
      command
        ? await command().catch((error: Error) => ({ type: 'command-failed', command: line, message: error.message }))
        : { type: 'unknown-command', line },
    );
  }
  lines.close();
  const started = performance.now();
  await app.close();
  send({ type: 'closed', ms: Math.round(performance.now() - started) });
}

/**
 * Starts an application whose key template its requests cannot fill, and reports how its start was
 * refused (app.init(), or the factory itself for an application context, which initialises at once).
 */
export async function startBadApp(create: () => Promise<{ init(): Promise<unknown>; close(): Promise<void> }>): Promise<Message> {
  let app: { init(): Promise<unknown>; close(): Promise<void> } | undefined;
  try {
    app = await create();
    await app.init();
    return { type: 'bad-key-started' };
  } catch (error) {
    return { type: 'bad-key-refused', code: (error as { code?: string }).code, message: (error as Error).message };
  } finally {
    await app?.close();
  }
}
