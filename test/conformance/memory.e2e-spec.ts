import { describeLockConformance } from './lock-conformance.js';

// The in-memory store for users' unit tests: the single-process part of the same suite, no Redis.
describeLockConformance('memory');
