import { describeServerConformance } from '../lock-conformance.js';

// Debian forky's (testing's) Valkey 9, on forky's own C library.
describeServerConformance('valkey-9');
