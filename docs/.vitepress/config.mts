// The documentation site (VitePress): Markdown under docs/, built into dist/docs by `npm run docs:build`
// (scripts/docs-build.mjs, which first generates the API reference under docs/api with TypeDoc and
// copies the benchmark reports under docs/reports). Nothing here fetches anything: search is
// VitePress's local index, diagrams are rendered to SVG at build time, fonts ship with the theme.
import { existsSync, readFileSync } from 'node:fs';
import { defineConfig, type DefaultTheme } from 'vitepress';
import { mermaidPlugin } from './mermaid.js';

const apiSidebarFile = new URL('../api/typedoc-sidebar.json', import.meta.url);
const apiSidebar: DefaultTheme.SidebarItem[] = existsSync(apiSidebarFile) ? JSON.parse(readFileSync(apiSidebarFile, 'utf8')) : [];

const guide: DefaultTheme.SidebarItem[] = [
  { text: 'Getting started', link: '/getting-started' },
  {
    text: 'Concepts',
    items: [
      { text: 'Owners and lock contexts', link: '/concepts/owners-and-contexts' },
      { text: 'Leases and the watchdog', link: '/concepts/leases-and-watchdog' },
      { text: 'Waiting and hand-over', link: '/concepts/waiting-and-handover' },
      { text: 'Fencing tokens', link: '/concepts/fencing' },
      { text: 'What is guaranteed, and what cannot be', link: '/concepts/guarantees' },
    ],
  },
  {
    text: 'Guides',
    items: [
      { text: '@DistributedLock on routes', link: '/guides/decorator' },
      { text: '@DistributedLock on providers', link: '/guides/providers' },
      { text: 'What clients receive, per transport', link: '/guides/transports' },
      { text: 'LockService: the plain lock', link: '/guides/lock-service' },
      { text: 'Fair lock', link: '/guides/fair-lock' },
      { text: 'Read-write lock', link: '/guides/read-write-lock' },
      { text: 'Multi-lock', link: '/guides/multi-lock' },
      { text: 'Semaphore', link: '/guides/semaphore' },
      { text: 'Leader election', link: '/guides/leader-election' },
      { text: 'Scheduled jobs (@ScheduledLock)', link: '/guides/scheduled-jobs' },
      { text: 'Fenced writes (FencedResource)', link: '/guides/fenced-writes' },
      { text: 'Redis clients', link: '/guides/redis-clients' },
      { text: 'Errors', link: '/guides/errors' },
    ],
  },
  {
    text: 'Operations',
    items: [
      { text: 'Configuration', link: '/operations/configuration' },
      { text: 'Deployment modes', link: '/operations/deployment-modes' },
      { text: 'Compatibility: servers, clients, runtimes', link: '/operations/compatibility' },
      { text: 'Managed services', link: '/operations/managed-services' },
      { text: 'Failover windows and faults', link: '/operations/failover' },
      { text: 'Metrics, events and tracing', link: '/operations/metrics' },
      { text: 'Inspecting locks', link: '/operations/inspection' },
      { text: 'Command-line inspector', link: '/operations/cli' },
      { text: 'The lock board (a live page)', link: '/operations/board' },
      { text: 'Health checks', link: '/operations/health' },
      { text: 'Graceful shutdown', link: '/operations/shutdown' },
      { text: 'Sizing', link: '/operations/sizing' },
    ],
  },
  { text: 'Testing with the in-memory store', link: '/testing' },
  {
    text: 'Recipes',
    items: [
      { text: 'Idempotent payment, fenced', link: '/recipes/idempotent-payment' },
      { text: 'A cron job on one instance', link: '/recipes/cron-on-one-instance' },
      { text: 'Per-tenant locks and limits', link: '/recipes/per-tenant' },
      { text: 'A BullMQ processor under a lock', link: '/recipes/bullmq-processor' },
    ],
  },
  {
    text: 'Migrating',
    items: [
      { text: 'From redlock', link: '/migration/from-redlock' },
      { text: 'From nest-redlock', link: '/migration/from-nest-redlock' },
      { text: 'From redis-semaphore', link: '/migration/from-redis-semaphore' },
      { text: 'From Redisson (Java)', link: '/migration/from-redisson' },
    ],
  },
  { text: 'Troubleshooting and FAQ', link: '/troubleshooting' },
  {
    text: 'Results',
    items: [
      { text: 'Benchmark', link: '/results/benchmark' },
      { text: 'Cost curves', link: '/results/cost-curves' },
      { text: 'The demo', link: '/results/demo' },
    ],
  },
];

export default defineConfig({
  title: 'nestjs-distributed-lock',
  description: 'Distributed locks for NestJS on Redis: reentrant, watchdog-renewed, woken by pub/sub, fenced.',
  base: process.env.DOCS_BASE ?? '/',
  outDir: '../dist/docs',
  cacheDir: '../.cache/docs-vitepress',
  lastUpdated: false,
  markdown: { config: (md) => mermaidPlugin(md) },
  // The local search index (about 0.8 MB, most of it the API reference) is one chunk, loaded when
  // the search box opens; Rollup's 500 kB warning is about pages' own code, which stays small.
  vite: { build: { chunkSizeWarningLimit: 1200 } },
  themeConfig: {
    search: { provider: 'local' },
    outline: { level: [2, 3] },
    nav: [
      { text: 'Guide', link: '/getting-started' },
      { text: 'API', link: '/api/' },
      { text: 'Results', link: '/results/benchmark' },
    ],
    sidebar: {
      '/api/': [{ text: 'API reference', link: '/api/', items: apiSidebar }],
      '/reports/': [
        {
          text: 'Results',
          items: [
            { text: 'Benchmark report', link: '/reports/bench-latest' },
            { text: 'Cost curves report', link: '/reports/bench-scaling' },
          ],
        },
      ],
      '/': guide,
    },
  },
});
