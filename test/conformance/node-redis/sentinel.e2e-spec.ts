import { NODE_REDIS } from '../client-drivers.js';
import { describeLockConformance } from '../lock-conformance.js';

// The same suite, with a node-redis sentinel (createSentinel) given as options.client.
describeLockConformance('sentinel', {}, NODE_REDIS);
