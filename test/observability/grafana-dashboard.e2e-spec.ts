import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { parse } from 'yaml';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

const GRAFANA = fileURLToPath(new URL('../../docs/public/grafana/', import.meta.url));
/** Labels Prometheus adds at scrape (job, instance) or that every histogram bucket has (le). */
const SCRAPE_LABELS = ['job', 'instance', 'le'];

/** Every query in a parsed dashboard or rule file, wherever it sits: `expr` (panels' targets, alert models, rules), a variable's `definition`. */
function expressions(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => expressions(item, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if ((key === 'expr' || key === 'definition') && typeof value === 'string') found.push(value);
      else expressions(value, found);
    }
  }
  return found;
}

/** Metric names, and label names per metric, from a Prometheus text exposition. */
function exposition(text: string): Map<string, Set<string>> {
  const metrics = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? /.exec(line);
    if (!sample) continue;
    const labels = metrics.get(sample[1]!) ?? new Set<string>();
    for (const pair of (sample[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(pair[1]!);
    metrics.set(sample[1]!, labels);
  }
  return metrics;
}

/**
 * The Grafana dashboard and the alert rules query what the library really exports: a LockClient on a
 * real Redis records into a real OpenTelemetry Prometheus exporter, the test makes it record every
 * instrument (waits, holds, outcomes, hand-overs, renewals, a lost lease, the gauges), scrapes the
 * exporter over HTTP, and checks every metric and label each query names against the scrape.
 */
describe('the Grafana dashboard and alert rules (docs/public/grafana)', () => {
  const redis = useRedis();
  let provider: MeterProvider;
  let server: Server;

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await provider?.shutdown();
  });

  it('every query names metrics and labels the library exports, and the panels asked for are there', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    provider = new MeterProvider({ readers: [exporter] });
    const metrics = { meterProvider: provider, metricName: (name: string) => name.replace(/:.*$/, ':*') };
    const client = await redis.client({ watchdogTimeout: '90ms', metrics });
    const other = await redis.client({ metrics });
    const first = await client.lock('grafana:1');
    const second = client.runInNewContext(() => client.lock('grafana:1', { waitTime: '5s' })); // waits, then a local hand-over
    await until(() => client.stats().waitingChannels === 1, 'the second caller to wait');
    expect(await other.tryLock('grafana:1', '20ms')).toBe(false); // a timeout
    await nextEvent(client.events, 'renewed');
    await first.unlock();
    await (await second).unlock();
    const lost = nextEvent(other.events, 'lost');
    await other.lock('grafana:short', '60ms');
    await lost;

    server = createServer((request, response) => exporter.getMetricsRequestHandler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const scrape = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
    const exported = exposition(scrape);
    for (const name of ['distributed_lock_leases_lost_total', 'distributed_lock_wait_duration_bucket', 'distributed_lock_acquisitions_total']) {
      expect(exported.has(name)).toBe(true);
    }

    const dashboard = JSON.parse(readFileSync(`${GRAFANA}distributed-lock-dashboard.json`, 'utf8')) as { panels: { title: string; type: string }[] };
    const files = [
      ['dashboard', dashboard],
      ['Grafana alert', parse(readFileSync(`${GRAFANA}distributed-lock-alerts.yaml`, 'utf8'))],
      ['Prometheus rule', parse(readFileSync(`${GRAFANA}distributed-lock.rules.yaml`, 'utf8'))],
    ] as const;
    const problems: string[] = [];
    let checked = 0;
    for (const [file, content] of files) {
      for (const expr of expressions(content)) {
        checked += 1;
        const named = [...new Set(expr.match(/\bdistributed_lock_[a-z_]+\b/g) ?? [])];
        if (named.length === 0) problems.push(`${file}: ${expr} names no metric of the library`);
        const missing = named.filter((name) => !exported.has(name));
        if (missing.length > 0) problems.push(`${file}: ${expr} names ${missing.join(', ')}, not exported`);
        const known = new Set([...SCRAPE_LABELS, ...named.flatMap((name) => [...(exported.get(name) ?? [])])]);
        const labels = [
          ...[...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((match) => match[1]!.split(',').map((label) => label.trim())),
          ...[...expr.matchAll(/\{([^}]*)\}/g)].flatMap((match) => [...match[1]!.matchAll(/([a-z_]+)\s*(?:=~|!=|!~|=)/g)].map((pair) => pair[1]!)),
        ];
        const unknown = labels.filter((label) => label !== '' && !known.has(label));
        if (unknown.length > 0) problems.push(`${file}: ${expr} uses label(s) ${unknown.join(', ')}, not on those metrics`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(14);
    const titles = dashboard.panels.map((panel) => panel.title);
    for (const title of ['Wait p99 by lock', 'Hold p99 by lock', 'Acquisitions by outcome', 'Leases lost', 'Waiters', 'Held locks'])
      expect(titles).toContain(title);
  });
});
