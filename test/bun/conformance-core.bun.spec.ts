// Run by Bun's test runner (`bun test`, which has Jest's API), not by Jest: test/bun/bun-runtime.e2e-spec.ts
// spawns it. The conformance core in single mode, through ioredis (the library's own connections) and
// through a node-redis 6 client, with the library as Bun imports it from the workspace: the built
// package (dist/, ES module build).
import { IOREDIS, NODE_REDIS } from '../conformance/client-drivers.js';
import { describeLockConformance } from '../conformance/lock-conformance.js';

describeLockConformance('single', {}, IOREDIS, 'core');
describeLockConformance('single', {}, NODE_REDIS, 'core');
