import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from 'redis-topology';
import { httpRequest } from './http-client.js';

const APP_MAIN = fileURLToPath(new URL('../inventory/main.js', import.meta.url));

export interface AppInstance {
  id: string;
  url: string;
  process: ChildProcess;
  log: string[];
}

/** Starts `count` inventory processes on free loopback ports and waits until each answers /health. */
export async function startApps(count: number, env: Record<string, string>): Promise<AppInstance[]> {
  const apps: AppInstance[] = [];
  for (let i = 1; i <= count; i++) {
    const port = await freePort();
    const id = `app-${i}`;
    const child = spawn(process.execPath, [APP_MAIN], {
      env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', INSTANCE_ID: id },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log: string[] = [];
    const keep = (chunk: Buffer): void => {
      log.push(chunk.toString());
      if (log.length > 100) log.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    apps.push({ id, url: `http://127.0.0.1:${port}`, process: child, log });
  }
  await Promise.all(apps.map(waitHealthy));
  return apps;
}

async function waitHealthy(app: AppInstance): Promise<void> {
  const deadline = performance.now() + 30_000;
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    if (app.process.exitCode !== null) throw new Error(`${app.id} exited during start-up:\n${app.log.join('')}`);
    const health = await httpRequest('GET', `${app.url}/health`).catch(() => undefined);
    if (health?.status === 200) return;
    if (performance.now() > deadline) throw new Error(`${app.id} did not become healthy within 30 s:\n${app.log.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

export async function stopApps(apps: AppInstance[]): Promise<void> {
  await Promise.all(
    apps.map(
      (app) =>
        new Promise<void>((resolve) => {
          if (app.process.exitCode !== null || app.process.signalCode !== null) return resolve();
          const timer = setTimeout(() => app.process.kill('SIGKILL'), 5000);
          app.process.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          app.process.kill('SIGTERM');
        }),
    ),
  );
}
