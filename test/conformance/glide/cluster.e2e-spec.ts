import { GLIDE } from './glide-driver.js';
import { describeLockConformanceOn } from '../lock-conformance.js';

// The conformance core through Valkey GLIDE (GlideClusterClient: sharded unlock notifications), on a Valkey 9 cluster.
describeLockConformanceOn('valkey-9', 'cluster', GLIDE, 'core');
