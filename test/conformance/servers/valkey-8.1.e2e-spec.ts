import { describeServerConformance } from '../lock-conformance.js';

// Debian trixie's Valkey 8.1, on trixie's own C library.
describeServerConformance('valkey-8.1');
