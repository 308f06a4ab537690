import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { DistributedLockError, LockClient, type InspectedLockKind } from '../core/index.js';
import { toMilliseconds } from '../core/util/duration.js';
import { lockDetails, lockTable } from './lock-table.js';

export const USAGE = `Usage: nestjs-distributed-lock <command> [options]

Commands:
  list [pattern]          held locks and semaphores whose names match the glob (default *), as a table
  inspect <name>          one lock: holder, holds, token, lease, renewal, waiters, readers; or a
                          semaphore: permits used of its size, each acquisition, callers in line
  watch [pattern]         the list, refreshed like top (Ctrl-C to stop)
  force-unlock <name>     delete a lock whoever holds it, after you type its name to confirm
                          (not a semaphore: its permits come back through releases and lease ends)

Options:
  --kind <kind>           reentrant, fair, read-write or semaphore (inspect, force-unlock; default: the
                          kind in use)
  --limit <n>             at most this many locks (list, watch; default 100)
  --interval <duration>   watch: time between refreshes (default 1s)
  --count <n>             watch: stop after n refreshes (default: until Ctrl-C)
  --json                  print JSON instead of a table (list, inspect)
  --yes                   force-unlock without asking
  -h, --help              this text

Connection and key prefix come from the same environment variables as the module: DISTRIBUTED_LOCK_REDIS_MODE,
DISTRIBUTED_LOCK_REDIS_URL or DISTRIBUTED_LOCK_REDIS_HOST/DISTRIBUTED_LOCK_REDIS_PORT, DISTRIBUTED_LOCK_REDIS_NODES, DISTRIBUTED_LOCK_REDIS_SENTINELS, DISTRIBUTED_LOCK_REDIS_USERNAME, DISTRIBUTED_LOCK_REDIS_PASSWORD,
DISTRIBUTED_LOCK_REDIS_TLS, ..., and DISTRIBUTED_LOCK_KEY_PREFIX (see docs/operations/configuration.md).`;

/** Where the CLI reads and writes (the process's streams, or a test's). */
export interface CliIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Record<string, string | undefined>;
}

class UsageError extends Error {}

const KINDS: readonly InspectedLockKind[] = ['reentrant', 'fair', 'read-write', 'semaphore'];
const NOT_FOR_SEMAPHORES =
  "force-unlock deletes locks, not semaphores: a semaphore's permits come back when their holders release them or their leases end (at most the lease: a watchdog lease, 30 s by default, once the holder's process is gone).";

/** Runs one command; resolves the exit code (0 done, 1 failed or not confirmed, 2 bad usage). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  let client: LockClient | undefined;
  try {
    client = await LockClient.connect({ env: io.env, metrics: false });
    return await run(client, parsed, io);
  } catch (error) {
    const code = error instanceof DistributedLockError ? ` [${error.code}]` : '';
    io.stderr.write(`nestjs-distributed-lock${code}: ${(error as Error).message}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    await client?.close();
  }
}

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      kind: { type: 'string' },
      limit: { type: 'string' },
      interval: { type: 'string' },
      count: { type: 'string' },
      json: { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, target, ...rest] = positionals;
  if (values.help || command === 'help') return { help: true as const };
  if (!command) throw new UsageError('Give a command.');
  if (!['list', 'inspect', 'watch', 'force-unlock'].includes(command)) throw new UsageError(`Unknown command "${command}".`);
  if (rest.length > 0) throw new UsageError(`Unexpected argument "${rest[0]}".`);
  if ((command === 'inspect' || command === 'force-unlock') && !target) throw new UsageError(`${command} needs a lock name.`);
  if (values.kind !== undefined && !(KINDS as readonly string[]).includes(values.kind)) throw new UsageError(`--kind must be one of ${KINDS.join(', ')}.`);
  if (command === 'force-unlock' && values.kind === 'semaphore') throw new UsageError(NOT_FOR_SEMAPHORES);
  const positive = (text: string | undefined, flag: string): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${flag} must be a positive integer, got "${text}".`);
    return value;
  };
  return {
    help: false as const,
    command,
    target,
    kind: values.kind as InspectedLockKind | undefined,
    limit: positive(values.limit, 'limit'),
    count: positive(values.count, 'count'),
    intervalMs: values.interval === undefined ? 1000 : toMilliseconds(values.interval, '--interval', { min: 10 }),
    json: values.json === true,
    yes: values.yes === true,
  };
}

type Parsed = Exclude<ReturnType<typeof parse>, { help: true }>;

async function run(client: LockClient, options: Parsed, io: CliIo): Promise<number> {
  const print = (text: string): void => void io.stdout.write(`${text}\n`);
  switch (options.command) {
    case 'list': {
      const locks = await client.list(options.target, { limit: options.limit });
      print(options.json ? JSON.stringify(locks, null, 2) : lockTable(locks));
      return 0;
    }
    case 'inspect': {
      const lock = await client.inspect(options.target!, options.kind);
      print(options.json ? JSON.stringify(lock, null, 2) : lockDetails(lock));
      return 0;
    }
    case 'watch':
      await watch(client, options, io);
      return 0;
    default:
      return forceUnlock(client, options, io);
  }
}

/** The list, again every interval: the screen redrawn on a terminal, one block after another otherwise. */
async function watch(client: LockClient, options: Parsed, io: CliIo): Promise<void> {
  let stop = false;
  const onSignal = (): void => {
    stop = true;
  };
  process.once('SIGINT', onSignal);
  try {
    for (let round = 1; !stop; round++) {
      const locks = await client.list(options.target, { limit: options.limit });
      const header = `nestjs-distributed-lock watch  ${client.target}  ${new Date(client.clock.wallNow()).toISOString()}  ${locks.length} lock(s) matching ${options.target ?? '*'}  (every ${options.intervalMs} ms, Ctrl-C to stop)`;
      io.stdout.write(`${io.stdout.isTTY ? '\x1b[H\x1b[2J' : round > 1 ? '\n' : ''}${header}\n\n${lockTable(locks)}\n`);
      if (options.count !== undefined && round >= options.count) break;
      await new Promise<void>((resolve) => client.clock.setTimer(options.intervalMs, resolve));
    }
  } finally {
    process.off('SIGINT', onSignal);
  }
}

/** Shows who holds the lock, asks for its name to be typed (unless --yes), then deletes it. */
async function forceUnlock(client: LockClient, options: Parsed, io: CliIo): Promise<number> {
  const name = options.target!;
  const before = await client.inspect(name, options.kind);
  io.stdout.write(`${lockDetails(before)}\n\n`);
  if (!before.locked) {
    io.stdout.write(`"${name}" is not held: nothing to unlock.\n`);
    return 0;
  }
  if (before.kind === 'semaphore') {
    io.stderr.write(`"${name}" is a semaphore. ${NOT_FOR_SEMAPHORES}\n`);
    return 1;
  }
  if (!options.yes) {
    const answer = await ask(
      io,
      `Force-unlocking lets another owner in while ${before.holder?.instance.label ?? 'its holders'} may still be working. Type the lock name to confirm: `,
    );
    if (answer !== name) {
      io.stdout.write('Not confirmed: nothing was changed.\n');
      return 1;
    }
  }
  const deleted = await lockOf(client, name, before.kind).forceUnlock();
  io.stdout.write(deleted ? `"${name}" was force-unlocked; a waiter, if any, has been woken.\n` : `"${name}" was already free.\n`);
  return 0;
}

function lockOf(client: LockClient, name: string, kind: InspectedLockKind): { forceUnlock(): Promise<boolean> } {
  if (kind === 'fair') return client.getFairLock(name);
  if (kind === 'read-write') return client.getReadWriteLock(name).writeLock(); // deletes the whole read-write lock
  return client.getLock(name);
}

/** One line from stdin (undefined if it closes first). */
function ask(io: CliIo, question: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: io.stdin, output: io.stdout, terminal: false });
    io.stdout.write(question);
    let answered = false;
    lines.once('line', (line) => {
      answered = true;
      lines.close();
      resolve(line.trim());
    });
    lines.once('close', () => {
      if (!answered) resolve(undefined);
    });
  });
}
