import { withServer } from '../../harness/servers.js';
import { GLIDE } from './glide-driver.js';
import { describeLockConformance } from '../lock-conformance.js';

// The conformance core through Valkey GLIDE (GlideClusterClient: sharded unlock notifications), on a Valkey 9 cluster.
withServer('valkey-9', 'lock conformance core through Valkey GLIDE, cluster', (server) => {
  describeLockConformance('cluster', { bin: server.bin, label: server.label }, GLIDE, 'core');
});
