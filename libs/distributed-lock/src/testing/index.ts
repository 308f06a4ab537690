/**
 * nestjs-distributed-lock/testing: run code that uses the library in unit tests without Redis.
 * An in-memory lock store with the library's semantics inside one process, and a Nest module that
 * swaps it in. For anything across processes, test against a real Redis.
 */
export { ManualClock } from './manual-clock.js';
export { InMemoryLockStore, MemoryKeyspace, type InMemoryLockStoreOptions, type StrictKeys } from '../memory/index.js';
export { DistributedLockTestingModule, createInMemoryLockService, type DistributedLockTestingOptions } from './distributed-lock-testing.module.js';
