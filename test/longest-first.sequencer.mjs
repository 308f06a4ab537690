import { relative } from 'node:path';
import Sequencer from '@jest/test-sequencer';

/**
 * Seconds the slowest test files take on the 2-core test machine (each alone, --maxWorkers=1, beside
 * other work: load 4-8; nest-apps as on CI, npm's cache holding only what npm ci fetched). Only the
 * order depends on them: a stale figure costs time, never a result.
 */
const SECONDS = {
  'test/package/nest-apps.e2e-spec.ts': 200,
  'test/package/strict-types.e2e-spec.ts': 180,
  'test/conformance/cluster.e2e-spec.ts': 74,
  'test/docs/site.e2e-spec.ts': 60,
  'test/package/pack.e2e-spec.ts': 57,
  'test/faults/fault-injection.e2e-spec.ts': 47,
  'test/conformance/master-slave.e2e-spec.ts': 46,
  'test/bench/bench-short.e2e-spec.ts': 40,
  'test/conformance/sentinel.e2e-spec.ts': 38,
  'test/conformance/single.e2e-spec.ts': 31,
  'test/bench/bench-scaling-short.e2e-spec.ts': 30,
  'test/app/restock-schedule.e2e-spec.ts': 29,
  'test/conformance/node-redis/single.e2e-spec.ts': 28,
  'test/conformance/redlock.e2e-spec.ts': 27,
  'test/demo/demo-short.e2e-spec.ts': 25,
  'test/docs/snippets.e2e-spec.ts': 25,
  'test/failover/node-redis-failover.e2e-spec.ts': 22,
  'test/conformance/differential.e2e-spec.ts': 22,
  'test/inspection/inspection.e2e-spec.ts': 21,
  'test/conformance/node-redis/sentinel.e2e-spec.ts': 19,
  'test/compat/pubsub-selection.e2e-spec.ts': 19,
  'test/package/clients.e2e-spec.ts': 17,
  'test/conformance/memory.e2e-spec.ts': 17,
  'test/conformance/memory-one-slot.e2e-spec.ts': 17,
  'test/conformance/servers/redis-8.0.e2e-spec.ts': 16,
  'test/conformance/node-redis/cluster.e2e-spec.ts': 16,
  'test/board/board-browser.e2e-spec.ts': 16,
  'test/faults/fencing-data-loss.e2e-spec.ts': 15,
  'test/faults/slow-link.e2e-spec.ts': 15,
  'test/conformance/glide/cluster.e2e-spec.ts': 15,
  'test/transports/http.e2e-spec.ts': 15,
  'test/faults/outage-bounds.e2e-spec.ts': 14,
  'test/conformance/servers/redis-6.0.e2e-spec.ts': 14,
  'test/conformance/servers/valkey-8.1.e2e-spec.ts': 14,
  'test/docs/errors-page.e2e-spec.ts': 13,
  'test/failover/redlock-nodes.e2e-spec.ts': 13,
  'test/app/restock-worker.e2e-spec.ts': 13,
};

/**
 * Longest first, so that the two workers finish together rather than one waiting for the last long
 * file (Jest's own order needs timings cached by an earlier run, which a fresh CI machine does not
 * have, and falls back on file size: the slowest file, nest-apps, is one of the smallest). A file's
 * own timing from an earlier run on this machine wins over the table; the rest keep Jest's order.
 */
export default class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this.time(test);
      if (cached != null) return cached / 1000;
      return SECONDS[relative(test.context.config.rootDir, test.path).split('\\').join('/')] ?? 0;
    };
    const ordered = super.sort([...tests]);
    const rank = new Map(ordered.map((test, i) => [test, i]));
    return ordered.sort((a, b) => seconds(b) - seconds(a) || rank.get(a) - rank.get(b));
  }
}
