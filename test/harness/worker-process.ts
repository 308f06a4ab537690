import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export type WorkerMessage = { type: string; [field: string]: unknown };

const WORKERS = fileURLToPath(new URL('../workers/', import.meta.url));
const alive = new Set<ChildProcess>();

/**
 * A Node process running one of test/workers/*.mjs against the built library. It reports with JSON
 * lines on stdout and takes commands as lines on stdin. Tests wait for its messages, never sleep.
 */
export class WorkerProcess {
  readonly messages: WorkerMessage[] = [];
  private readonly stderr: string[] = [];
  private readonly listeners = new Set<() => void>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(private readonly child: ChildProcess) {
    alive.add(child);
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        try {
          this.messages.push(JSON.parse(line) as WorkerMessage);
        } catch {
          this.stderr.push(`(stdout) ${line}`);
        }
        for (const listener of [...this.listeners]) listener();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk.toString()));
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        alive.delete(child);
        for (const listener of [...this.listeners]) listener();
        resolve({ code, signal });
      }),
    );
  }

  static start(script: string, env: Record<string, string | number>, args: (string | number)[] = []): WorkerProcess {
    // Only the test's own Redis settings: never DISTRIBUTED_LOCK_* inherited from the shell.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^DISTRIBUTED_LOCK_/.test(name)));
    const child = spawn(process.execPath, [join(WORKERS, script), ...args.map(String)], {
      env: { ...inherited, ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new WorkerProcess(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the first message (already received or future) that matches; rejects if the worker exits first. */
  waitFor(match: (message: WorkerMessage) => boolean, what = 'message', timeoutMs = 20_000): Promise<WorkerMessage> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const found = this.messages.find(match);
        if (found) {
          done();
          resolve(found);
        } else if (!this.isRunning) {
          done();
          reject(new Error(`worker exited before ${what}; stderr:\n${this.stderr.join('')}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`worker sent no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.messages)}; stderr:\n${this.stderr.join('')}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      this.listeners.add(check);
      check();
    });
  }

  waitForType(type: string, timeoutMs?: number): Promise<WorkerMessage> {
    return this.waitFor((message) => message.type === type, `"${type}"`, timeoutMs);
  }

  send(command: string): void {
    this.child.stdin!.write(`${command}\n`);
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  async stop(): Promise<void> {
    if (this.isRunning) {
      this.child.kill('SIGCONT');
      this.child.kill('SIGKILL');
    }
    await this.exited;
  }

  errorOutput(): string {
    return this.stderr.join('');
  }
}

/** Kills every worker still alive (afterEach safety net). */
export async function stopAllWorkers(): Promise<void> {
  for (const child of alive) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  await Promise.all(
    [...alive].map(
      (child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve))),
    ),
  );
}
