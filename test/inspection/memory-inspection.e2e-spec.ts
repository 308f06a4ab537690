import { LockClient } from 'nestjs-distributed-lock';
import { InMemoryLockStore } from 'nestjs-distributed-lock/testing';
import { useRedis } from '../harness/use-redis.js';

/**
 * Inspection on the in-memory store of `/testing` (users' unit tests call `inspect` and `list` too):
 * the inspect script runs there as it is, and `list` needs SCAN with MATCH, whose glob must select
 * exactly the keys Redis selects (checked against a real redis-server).
 */
describe('lock inspection on the in-memory store', () => {
  const redis = useRedis();

  it('SCAN MATCH selects the keys Redis selects, for every kind of glob', async () => {
    const keys = [
      'lock:{a}',
      'lock:{ab}',
      'lock:{a}:fair',
      'lock:{b*}',
      'lock:{b?}',
      'lock:{c]}',
      'lock:{[x]}',
      'lock:{x-1}',
      'lock:{x-9}',
      'lock:{m}',
      'lock:{-}',
      'other',
      'lock:{a\\b}',
    ];
    const patterns = [
      '*',
      'lock:{a}*',
      'lock:{?}',
      'lock:{a?}',
      'lock:{[ab]*',
      'lock:{[^a]*',
      'lock:{x-[0-5]}',
      'lock:{b\\*}',
      'lock:{b\\?}',
      'lock:{\\[x\\]}',
      'lock:{c]}',
      'lock:{[c]]*',
      'lock:{a\\\\b}',
      'lock:\\{a\\}',
      'nothing*',
      'lock:{[x',
      'lock:{[a\\-z]}', // an escaped '-' in a set is itself: '-', not the range a-z
    ];
    const admin = redis.server().client();
    const store = new InMemoryLockStore();
    await store.connect();
    for (const key of keys) {
      await admin.set(key, '1');
      await store.set(key, '1');
    }
    try {
      for (const pattern of patterns) {
        const expected = (await admin.keys(pattern)).sort();
        const [cursor, found] = await store.scan('0', 'MATCH', pattern, 'COUNT', 1000);
        expect([pattern, cursor, found.sort()]).toEqual([pattern, '0', expected]);
      }
      expect((await admin.keys('lock:{a}*')).length).toBeGreaterThan(1); // the patterns do select something
    } finally {
      await admin.del(...keys);
      store.disconnect();
    }
  });

  it('inspect shows readers and a semaphore, and list finds them by pattern', async () => {
    const locks = await LockClient.connect({ client: new InMemoryLockStore() });
    try {
      const reader = await locks.getReadWriteLock('mem:rw').readLock().lock('10s');
      const permits = await locks.getSemaphore('mem:sem', { size: 3 }).acquire(2);
      const free = await locks.lock('mem:free');
      await free.unlock();

      expect((await locks.inspect('mem:rw')).readers.map((r) => [r.token, r.watchdog])).toEqual([[reader.token, false]]);
      const semaphore = await locks.getSemaphore('mem:sem', { size: 3 }).inspect();
      expect(semaphore).toMatchObject({ kind: 'semaphore', locked: true, semaphore: { size: 3, used: 2, available: 1 } });
      expect(semaphore.permitHolders.map((h) => [h.permits, h.token, h.watchdog])).toEqual([[2, permits.token, true]]);
      expect((await locks.list('mem:*')).map((found) => [found.name, found.kind])).toEqual([
        ['mem:rw', 'read-write'],
        ['mem:sem', 'semaphore'],
      ]);
      expect((await locks.list('mem:s*')).map((found) => found.name)).toEqual(['mem:sem']);
      await reader.unlock();
      await permits.release();
      expect(await locks.list('mem:*')).toEqual([]);
    } finally {
      await locks.close();
    }
  });
});
