import { withServer } from '../../harness/servers.js';
import { GLIDE } from './glide-driver.js';
import { describeLockConformance } from '../lock-conformance.js';

// The conformance core through Valkey GLIDE (GlideClient), on Valkey 9: the server GLIDE is made for.
withServer('valkey-9', 'lock conformance core through Valkey GLIDE, single', (server) => {
  describeLockConformance('single', { bin: server.bin, label: server.label }, GLIDE, 'core');
});
