import { reentrantAcquire as REENTRANT_ACQUIRE_SCRIPT } from '../scripts/reentrant-acquire.script.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';
import { MemoryKeyspace } from './memory-keyspace.js';

/** A keyspace on a clock the test moves by hand. */
function manualClock(): { keyspace: MemoryKeyspace; advance(ms: number): void } {
  let now = 1_000;
  return { keyspace: new MemoryKeyspace(() => now), advance: (ms) => (now += ms) };
}

describe('MemoryKeyspace', () => {
  it('follows Redis expiry: PTTL -2 / -1 / ms left, gone once the clock is past the deadline', () => {
    const { keyspace, advance } = manualClock();
    expect(keyspace.pttl('k')).toBe(-2);
    keyspace.hset('k', 'owner', 'a');
    expect(keyspace.pttl('k')).toBe(-1);
    expect(keyspace.pexpire('k', 100)).toBe(1);
    advance(40);
    expect(keyspace.pttl('k')).toBe(60);
    advance(60);
    expect(keyspace.exists('k')).toBe(1); // at the deadline, still there (Redis: expired when now > when)
    advance(1);
    expect(keyspace.exists('k')).toBe(0);
    expect(keyspace.hget('k', 'owner')).toBeNull();
    expect(keyspace.pexpire('k', 100)).toBe(0);
  });

  it('SET clears an expiry, HSET keeps it; a hash or sorted set emptied is deleted', () => {
    const { keyspace } = manualClock();
    keyspace.set('s', 'x', { px: 50 });
    keyspace.set('s', 'y');
    expect(keyspace.pttl('s')).toBe(-1);
    keyspace.hset('h', 'a', 1);
    keyspace.pexpire('h', 500);
    keyspace.hset('h', 'b', 2);
    expect(keyspace.pttl('h')).toBe(500);
    keyspace.hdel('h', 'a', 'b');
    expect(keyspace.exists('h')).toBe(0);
    keyspace.zadd('z', 1, 'm');
    keyspace.zrem('z', 'm');
    expect(keyspace.exists('z')).toBe(0);
  });

  it('refuses the wrong type and non-integers as Redis does', () => {
    const { keyspace } = manualClock();
    keyspace.set('s', 'text');
    expect(() => keyspace.hget('s', 'f')).toThrow(/WRONGTYPE/);
    expect(() => keyspace.incr('s')).toThrow(/not an integer/);
    expect(keyspace.incr('n')).toBe(1);
    expect(keyspace.incrby('n', 4)).toBe(5);
  });

  it('orders sorted sets by score then member, with inclusive and exclusive bounds', () => {
    const { keyspace } = manualClock();
    keyspace.zadd('z', 3, 'c');
    keyspace.zadd('z', 1, 'b');
    keyspace.zadd('z', 1, 'a');
    expect(keyspace.zrange('z', 0, -1)).toEqual(['a', 'b', 'c']);
    expect(keyspace.zrange('z', -1, -1, true)).toEqual(['c', '3']);
    expect(keyspace.zrangebyscore('z', '-inf', 1)).toEqual(['a', 'b']);
    expect(keyspace.zcount('z', '(1', '+inf')).toBe(1);
  });
});

describe('InMemoryLockStore', () => {
  it('runs the library scripts atomically through defineCommand, and counts them', async () => {
    const store = new InMemoryLockStore();
    store.defineCommand(REENTRANT_ACQUIRE_SCRIPT.name, { numberOfKeys: 2, lua: REENTRANT_ACQUIRE_SCRIPT.lua });
    const acquire = (store as unknown as Record<string, (...args: unknown[]) => Promise<[number, number]>>)[REENTRANT_ACQUIRE_SCRIPT.name]!;
    const [token, holds] = await acquire.call(store, 'lock:{a}', 'lock:{a}:fence', 'me', 1000);
    expect(holds).toBe(1);
    expect(await acquire.call(store, 'lock:{a}', 'lock:{a}:fence', 'me', 1000)).toEqual([token, 2]);
    const [zero, ttl] = await acquire.call(store, 'lock:{a}', 'lock:{a}:fence', 'you', 1000);
    expect(zero).toBe(0);
    expect(ttl).toBeGreaterThan(900);
    expect(store.keyspace.scriptCalls).toBe(3);
    expect(await store.script('EXISTS', store.scriptsSet[REENTRANT_ACQUIRE_SCRIPT.name]!.sha, 'f'.repeat(40))).toEqual([1, 0]);
  });

  it('refuses a script it has no twin for, with a message that says why', async () => {
    const store = new InMemoryLockStore();
    store.defineCommand('mine', { numberOfKeys: 1, lua: "return redis.call('get', KEYS[1])" });
    const mine = (store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>).mine!;
    await expect(mine.call(store, 'k')).rejects.toThrow(/cannot run Lua/);
  });

  it('delivers a message after the publishing command, only to connections subscribed to the channel', async () => {
    const store = new InMemoryLockStore();
    const subscriber = store.duplicate();
    const other = store.duplicate();
    const received: string[] = [];
    subscriber.on('message', (channel: string, message: string) => received.push(`${channel}:${message}`));
    other.on('message', () => received.push('wrong connection'));
    expect(await subscriber.subscribe('c')).toBe(1);
    expect(store.keyspace.numsub('c')).toBe(1);
    const published = store.publish('c', 'released');
    expect(received).toEqual([]); // not synchronously: like a message on another socket
    expect(await published).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toEqual(['c:released']);
    await subscriber.unsubscribe('c');
    expect(store.keyspace.numsub('c')).toBe(0);
  });

  it('behaves as an ioredis connection: subscriber mode, lazy connect, closed after quit', async () => {
    const store = new InMemoryLockStore();
    const subscriber = store.duplicate({ lazyConnect: true });
    expect(subscriber.status).toBe('wait');
    await subscriber.connect();
    expect(subscriber.status).toBe('ready');
    await subscriber.subscribe('c');
    await expect(subscriber.get('k')).rejects.toThrow(/subscriber mode/);
    expect(await subscriber.ping()).toBe('PONG');
    await subscriber.quit();
    expect(subscriber.status).toBe('end');
    expect(store.keyspace.numsub('c')).toBe(0);
    await expect(subscriber.ping()).rejects.toThrow(/Connection is closed/);
    expect(await store.ping()).toBe('PONG'); // the other connections to the data are unaffected
  });
});
