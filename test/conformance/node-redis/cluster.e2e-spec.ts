import { NODE_REDIS } from '../client-drivers.js';
import { describeLockConformance } from '../lock-conformance.js';

// The same suite, with a node-redis cluster (createCluster) given as options.client.
describeLockConformance('cluster', {}, NODE_REDIS);
