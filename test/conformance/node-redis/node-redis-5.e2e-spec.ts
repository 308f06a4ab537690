import { createRequire } from 'node:module';
import { NODE_REDIS_5 } from '../client-drivers.js';
import { describeLockConformance } from '../lock-conformance.js';

// node-redis 5, the older major of the peer range (RESP2 by default; the workspace's `redis5` alias):
// the conformance core in single mode. node-redis 6 runs the whole suite (single.e2e-spec.ts) and the
// core in cluster and sentinel mode; the port sends the same commands through both majors.
describe('the workspace alias redis5', () => {
  it('is node-redis 5 (so the run below is not 6 again)', () => {
    const version = (createRequire(import.meta.url)('redis5/package.json') as { version: string }).version;
    expect(version).toMatch(/^5\./);
  });
});

describeLockConformance('single', {}, NODE_REDIS_5, 'core');
