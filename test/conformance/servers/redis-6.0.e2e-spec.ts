import { describeServerConformance } from '../lock-conformance.js';

// Debian bullseye's Redis 6.0, what many managed services still run: a cluster of it has no sharded
// pub/sub, so unlock notifications go over plain pub/sub there.
describeServerConformance('redis-6.0');
