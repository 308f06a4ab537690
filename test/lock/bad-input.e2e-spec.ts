import { InvalidLockArgumentError, LockClient } from 'nestjs-distributed-lock';
import { freePort } from 'redis-topology';
import type { Redis } from 'ioredis';

describe('bad input is refused before any Redis call', () => {
  let client: LockClient;

  beforeAll(async () => {
    // Nothing listens on this port, and lazyConnect keeps the client from even trying: any call
    // that reached Redis would fail with LockBackendError instead of the argument error.
    client = new LockClient({ connection: { mode: 'single', host: '127.0.0.1', port: await freePort() }, lazyConnect: true });
    await client.connect();
  });
  afterAll(async () => {
    expect((client.redis as Redis).status).toBe('wait');
    await client.close();
  });

  const badNames: [string, unknown][] = [
    ['empty', ''],
    ['whitespace', '   '],
    ['too long', 'x'.repeat(513)],
    ['not a string', 42],
    ['undefined', undefined],
    ['with a hash-tag brace', 'a{b}'],
  ];
  it.each(badNames)('lock name %s', async (_label, name) => {
    for (const call of [
      () => client.lock(name as string),
      () => client.tryLock(name as string),
      () => client.unlock(name as string),
      () => client.isLocked(name as string),
      () => client.withLock(name as string, () => 1),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(InvalidLockArgumentError);
    }
  });

  const badDurations: [string, unknown][] = [
    ['zero', 0],
    ['negative', -5],
    ['NaN', Number.NaN],
    ['Infinity', Infinity],
    ['unknown unit', '5 parsecs'],
    ['below the minimum', 5],
    ['beyond a timer', 2 ** 31],
    ['a boolean', true],
  ];
  it.each(badDurations)('leaseTime %s', async (_label, lease) => {
    await expect(client.lock('bad', lease as number)).rejects.toBeInstanceOf(InvalidLockArgumentError);
    await expect(client.tryLock('bad', 0, lease as number)).rejects.toBeInstanceOf(InvalidLockArgumentError);
    await expect(client.lock('bad', { leaseTime: lease as number })).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it.each([
    ['negative', -1],
    ['NaN', Number.NaN],
    ['Infinity', Infinity],
    ['garbage', 'soon'],
  ])('waitTime %s', async (_label, wait) => {
    await expect(client.tryLock('bad', wait as number)).rejects.toBeInstanceOf(InvalidLockArgumentError);
    await expect(client.lock('bad', { waitTime: wait as number })).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('a multi-lock of something that is neither a name nor a lock object', () => {
    for (const item of [{ name: 'x' }, [], new Date(), 7, null]) {
      const error = (() => {
        try {
          client.getMultiLock(['ok', item as never]);
          return undefined;
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(InvalidLockArgumentError);
      expect((error as InvalidLockArgumentError).message).toMatch(/multi-lock names\[1\]/);
    }
    expect(() => client.getMultiLock('x' as never)).toThrow(InvalidLockArgumentError);
  });

  it('unknown options and misplaced arguments', async () => {
    await expect(client.lock('bad', { leasetime: 100 } as never)).rejects.toThrow(/unknown option "leasetime"/);
    await expect(client.tryLock('bad', { waitTime: 1 }, 100)).rejects.toBeInstanceOf(InvalidLockArgumentError);
    await expect(client.lock('bad', { signal: 'stop' } as never)).rejects.toBeInstanceOf(InvalidLockArgumentError);
  });

  it('every error carries a stable code and says what to do', async () => {
    const error = (await client.lock('bad', -1).catch((e: unknown) => e)) as InvalidLockArgumentError;
    expect(error.code).toBe('LOCK_INVALID_ARGUMENT');
    expect(error.message).toMatch(/leaseTime/);
    expect(error.message).toMatch(/minimum/);
  });
});
