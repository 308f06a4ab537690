import { NODE_REDIS } from '../client-drivers.js';
import { describeLockConformance } from '../lock-conformance.js';

// The conformance core (the full suite runs through node-redis in single mode, and in every mode through ioredis), with a node-redis cluster (createCluster) given as options.client.
describeLockConformance('cluster', {}, NODE_REDIS, 'core');
