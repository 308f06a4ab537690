export { InMemoryLockStore, type InMemoryLockStoreOptions } from './in-memory-lock-store.js';
export { MemoryKeyspace } from './memory-keyspace.js';
export type { StrictKeys } from './strict-keys.js';
