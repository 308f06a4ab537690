import { GLIDE } from './glide-driver.js';
import { describeLockConformanceOn } from '../lock-conformance.js';

// The conformance core through Valkey GLIDE (GlideClient), on Valkey 9: the server GLIDE is made for.
describeLockConformanceOn('valkey-9', 'single', GLIDE, 'core');
