import { describeLockConformance } from './lock-conformance.js';

// The in-memory store for users' unit tests: the single-process part of the same suite, no Redis.
// Semaphores join once the store runs the real Lua: their scripts have no JavaScript twin yet.
describeLockConformance('memory', {}, { semaphore: true });
