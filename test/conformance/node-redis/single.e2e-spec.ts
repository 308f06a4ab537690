import { NODE_REDIS } from '../client-drivers.js';
import { describeLockConformance } from '../lock-conformance.js';

// The same suite, with a node-redis 6 client (createClient) given as options.client.
describeLockConformance('single', {}, NODE_REDIS);
