import { withRedis6 } from '../harness/redis6.js';
import { describeLockConformance } from './lock-conformance.js';

// The same suite against a Redis 6 server (the version many managed services still run).
withRedis6('lock conformance: single on Redis 6', ({ bin, version }) => describeLockConformance('single', { bin, label: `Redis ${version}` }));
