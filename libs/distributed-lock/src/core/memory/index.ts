export { InMemoryLockStore } from './in-memory-lock-store.js';
export { MemoryKeyspace } from './memory-keyspace.js';
