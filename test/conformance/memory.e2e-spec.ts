import { InMemoryLockStore } from 'nestjs-distributed-lock/testing';
import { describeMemoryConformance } from './lock-conformance.js';
import { describeStrictKeysControls } from './strict-keys-controls.js';

// The in-memory store for users' unit tests: the single-process part of the same suite, no Redis.
// Strict keys ('declared'): every script of every lock kind must declare each key it touches, as
// Dragonfly and ElastiCache require; the store fails the test otherwise (docs/operations/managed-services.md).
const store = new InMemoryLockStore({ strictKeys: 'declared' });
describeMemoryConformance({ store });
describeStrictKeysControls(store);
