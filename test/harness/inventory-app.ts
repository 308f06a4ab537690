import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from 'redis-topology';
import { until } from './wait.js';

const APP_MAIN = fileURLToPath(new URL('../../dist/apps/inventory/main.js', import.meta.url));

/** One process of the demo app (apps/inventory), started from its build. */
export interface InventoryApp {
  id: string;
  url: string;
  child: ChildProcess;
  /** Everything it wrote to stdout and stderr. */
  log: string[];
}

/** Starts an instance with `env` (and PORT, HOST, INSTANCE_ID = `id`); resolves once /health answers 200. */
export async function startApp(id: string, env: Record<string, string>): Promise<InventoryApp> {
  const port = await freePort();
  // Only this test's Redis settings: never DISTRIBUTED_LOCK_* inherited from the shell.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(DISTRIBUTED_LOCK|INVENTORY)_/.test(name)));
  const child = spawn(process.execPath, [APP_MAIN], {
    env: { ...inherited, ...env, PORT: String(port), HOST: '127.0.0.1', INSTANCE_ID: id },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const app = { id, url: `http://127.0.0.1:${port}`, child, log };
  await until(
    async () => {
      if (child.exitCode !== null) throw new Error(`${id} exited during start-up:\n${log.join('')}`);
      return (await fetch(`${app.url}/health`).catch(() => undefined))?.status === 200;
    },
    `${id} to answer /health`,
    30_000,
  );
  return app;
}

/** SIGTERM (the app closes itself: enableShutdownHooks), SIGKILL after 10 s; resolves once it exited. */
export async function stopApp(app: InventoryApp): Promise<void> {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return;
  const exited = new Promise((resolve) => app.child.once('exit', resolve));
  app.child.kill('SIGCONT');
  app.child.kill('SIGTERM');
  const timer = setTimeout(() => app.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
