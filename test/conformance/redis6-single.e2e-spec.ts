import { withServer } from '../harness/servers.js';
import { describeLockConformance } from './lock-conformance.js';

// The same suite against a Redis 6 server (the version many managed services still run).
withServer('redis-6.0', 'lock conformance: single on Redis 6.0', ({ bin, label }) => describeLockConformance('single', { bin, label }));
