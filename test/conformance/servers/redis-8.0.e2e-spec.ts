import { describeServerConformance } from '../lock-conformance.js';

// Debian trixie's Redis 8.0, on trixie's own C library.
describeServerConformance('redis-8.0');
