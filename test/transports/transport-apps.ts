import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { WorkerProcess, type WorkerMessage } from '../harness/worker-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SOURCES = fileURLToPath(new URL('./apps/', import.meta.url));
/** Inside the repository, so that the apps resolve nestjs-distributed-lock (its dist) and Nest from its node_modules. */
const OUT = join(ROOT, '.cache/transport-apps');

/**
 * The transports' apps (test/transports/apps/*.ts) as ES modules under .cache/transport-apps, each
 * file transpiled alone (decorators with their metadata, as tsc emits them; types are checked by the
 * project's tsc run, which includes test/). A few milliseconds per file, so every test file does it
 * for itself; a file is replaced by a rename, so parallel test files never read half of one.
 */
function transpileApps(): void {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, 'package.json'), '{ "type": "module" }\n');
  for (const file of readdirSync(SOURCES).filter((name) => name.endsWith('.ts'))) {
    const { outputText } = ts.transpileModule(readFileSync(join(SOURCES, file), 'utf8'), {
      fileName: file,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    });
    const target = join(OUT, file.replace(/\.ts$/, '.js'));
    const partial = `${target}.${process.pid}.tmp`;
    writeFileSync(partial, outputText);
    renameSync(partial, target);
  }
}

let transpiled = false;

/** One app process of a transport test, started from `<app>.app.ts`; resolves once it reported `ready`. */
export async function startApp(app: string, env: Record<string, string | number>): Promise<{ process: WorkerProcess; ready: WorkerMessage }> {
  if (!transpiled) transpileApps();
  transpiled = true;
  // WorkerProcess starts scripts of test/workers/; this one is two levels up from there.
  const child = WorkerProcess.start(`../../.cache/transport-apps/${app}.app.js`, env);
  try {
    return { process: child, ready: await child.waitForType('ready', 30_000) };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** The log lines an app process reported at `level` whose message matches `pattern`. */
export function logged(app: WorkerProcess, level: 'error' | 'warn' | 'log' | 'debug', pattern: RegExp): string[] {
  return app.messages.filter((m) => m.type === 'log' && m.level === level && pattern.test(String(m.message))).map((m) => String(m.message));
}

/** Sends `close` and waits for the process to exit by itself: nothing (a timer, a socket) may keep it alive after app.close(). */
export async function closeApp(app: WorkerProcess, withinMs = 10_000): Promise<{ closed: WorkerMessage; code: number | null }> {
  app.send('close');
  const closed = await app.waitForType('closed', withinMs);
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([app.exited, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), withinMs)))]);
  clearTimeout(timer);
  if (!exit) throw new Error(`the app process did not exit within ${withinMs} ms of app.close(); something keeps it alive`);
  return { closed, code: exit.code };
}
