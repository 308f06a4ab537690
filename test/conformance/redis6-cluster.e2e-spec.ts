import { withRedis6 } from '../harness/redis6.js';
import { describeLockConformance } from './lock-conformance.js';

// The same suite against a Redis 6 cluster: no sharded pub/sub, so unlock notifications go over plain pub/sub.
withRedis6('lock conformance: cluster on Redis 6', ({ bin, version }) => describeLockConformance('cluster', { bin, label: `Redis ${version}` }));
