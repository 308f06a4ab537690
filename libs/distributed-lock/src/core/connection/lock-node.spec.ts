import type { RedisPort } from '../redis/redis-port.js';
import { defineLockScript } from '../scripts/lock-script.js';
import { systemClock } from '../util/clock.js';
import { LockNode } from './lock-node.js';

/** A script whose reply parser refuses anything but a number. */
const counted = defineLockScript<{ key: string }, number, unknown>({
  name: 'lockNodeSpecCounted',
  keys: (a) => [a.key],
  argv: () => [],
  lua: "return redis.call('incr', KEYS[1])",
  parse: (raw) => {
    if (typeof raw !== 'number') throw new Error(`malformed reply ${JSON.stringify(raw)}`);
    return raw;
  },
});

/** The part of the port a lone unguarded script call uses: runScript answers `reply`. */
function portAnswering(reply: unknown): RedisPort {
  return {
    isCluster: false,
    runScript: () => Promise.resolve(reply),
    time: () => Promise.resolve(['0', '0']),
    isReplyError: () => false,
  } as unknown as RedisPort;
}

describe('LockNode, a call sent alone', () => {
  it('resolves with the parsed reply', async () => {
    const node = new LockNode(portAnswering(3), { target: 'spec', timeoutMs: 1000, clock: systemClock });
    await expect(node.run(counted, { key: 'k' })).resolves.toBe(3);
    node.stop();
  });

  it("rejects when the reply parser refuses the reply (the caller's promise never stays pending)", async () => {
    const node = new LockNode(portAnswering('not a number'), { target: 'spec', timeoutMs: 1000, clock: systemClock });
    await expect(node.run(counted, { key: 'k' })).rejects.toThrow('malformed reply "not a number"');
    node.stop();
  });
});
