import type { AppInstance } from './app-instances.js';
import { httpRequest, type HttpResult } from './http-client.js';
import type { LockHistograms } from './lock-metrics.js';

export const ENDPOINTS = ['decorator', 'lock', 'try-lock', 'unsafe'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export interface RunSpec {
  experiment: 1 | 2;
  endpoint: Endpoint;
  stock: number;
  requests: number;
  /** The requests are sent evenly over this window (the seeds: 100 in 1 s, 1000 in 5 s). */
  spreadMs: number;
  /** Critical-section work of the app, for the ceiling (1000 / workMs requests per second). */
  workMs: number;
}

export interface RunResult extends RunSpec {
  sold: number;
  soldOut: number;
  busy: number;
  staleToken: number;
  errors: number;
  /** Orders recorded in Redis, and the stock left there. */
  orders: number;
  stockLeft: number;
  /** Orders beyond the initial stock. Must be 0 for every protected endpoint. */
  oversold: number;
  /** stock + orders add up to the initial stock (no lost update). */
  consistent: boolean;
  elapsedMs: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** requestsPerSecond / (1000 / workMs): how close to a perfectly serial critical section. */
  ceilingShare: number;
  /** Up to five distinct failures (status and body), to tell what went wrong. */
  errorSamples: string[];
  /** Protected endpoints: the lock wait and hold histograms of this run, from the apps' /metrics. */
  lockMetrics?: LockHistograms;
}

export type Progress = (done: number, total: number) => void;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Sets up a product, fires the purchases round-robin over the app instances, and reads the outcome back. */
export async function runExperiment(apps: AppInstance[], spec: RunSpec, runId: string, progress: Progress): Promise<RunResult> {
  const productId = `e${spec.experiment}-${spec.endpoint}-${runId}`;
  const setUp = await httpRequest('POST', `${apps[0]!.url}/products/${productId}`, { stock: spec.stock });
  if (setUp.status !== 201) throw new Error(`setting up product ${productId} failed: ${setUp.status} ${JSON.stringify(setUp.body)}`);

  const results: HttpResult[] = [];
  const interval = spec.requests > 1 ? spec.spreadMs / (spec.requests - 1) : 0;
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < spec.requests; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const app = apps[i % apps.length]!;
    pending.push(
      httpRequest('POST', `${app.url}/products/${productId}/purchase/${spec.endpoint}`)
        .catch((error: Error): HttpResult => ({ status: 0, body: error.message, ms: performance.now() - due }))
        .then((result) => {
          results.push(result);
          progress(results.length, spec.requests);
        }),
    );
  }
  await Promise.all(pending);
  const elapsedMs = performance.now() - started;

  const state = (await httpRequest('GET', `${apps[0]!.url}/products/${productId}`)).body as { stock: number; orders: number };
  const count = (predicate: (r: HttpResult) => boolean): number => results.filter(predicate).length;
  const outcome = (r: HttpResult): string | undefined =>
    (r.body as { result?: string; code?: string } | undefined)?.result ?? (r.body as { code?: string } | undefined)?.code;
  const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
  const requestsPerSecond = (results.length / elapsedMs) * 1000;
  return {
    ...spec,
    sold: count((r) => r.status === 201),
    soldOut: count((r) => r.status === 409 && outcome(r) === 'sold-out'),
    staleToken: count((r) => r.status === 409 && outcome(r) === 'stale-token'),
    busy: count((r) => r.status === 423),
    errors: count((r) => ![201, 409, 423].includes(r.status)),
    orders: state.orders,
    stockLeft: state.stock,
    oversold: Math.max(0, state.orders - spec.stock),
    consistent: state.stock + state.orders === spec.stock,
    elapsedMs,
    requestsPerSecond,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    ceilingShare: spec.workMs > 0 ? requestsPerSecond / (1000 / spec.workMs) : 0,
    errorSamples: [
      ...new Set(results.filter((r) => ![201, 409, 423].includes(r.status)).map((r) => `${r.status} ${JSON.stringify(r.body)}`.slice(0, 300))),
    ].slice(0, 5),
  };
}
