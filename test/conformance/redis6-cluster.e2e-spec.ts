import { withServer } from '../harness/servers.js';
import { describeLockConformance } from './lock-conformance.js';

// The same suite against a Redis 6 cluster: no sharded pub/sub, so unlock notifications go over plain pub/sub.
withServer('redis-6.0', 'lock conformance: cluster on Redis 6.0', ({ bin, label }) => describeLockConformance('cluster', { bin, label }));
