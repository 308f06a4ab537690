import { createHash } from 'node:crypto';
import { jest } from '@jest/globals';
import { reentrantAcquire as REENTRANT_ACQUIRE_SCRIPT } from '../core/locks/reentrant/reentrant-acquire.script.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';
import { MemoryKeyspace } from './memory-keyspace.js';
import { systemClock } from '../core/util/clock.js';

/** A keyspace on a clock the test moves by hand. */
function manualClock(): { keyspace: MemoryKeyspace; advance(ms: number): void } {
  let now = 1_000;
  const clock = { ...systemClock, now: () => now, wallNow: () => 1_750_000_000_000 + now };
  return { keyspace: new MemoryKeyspace(clock), advance: (ms) => (now += ms) };
}

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
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
  // First in this file: the Lua VM is not loaded yet (each test file has its own module registry).
  it('applies commands in the order they are sent, also while the Lua VM is still loading, and under fake timers', async () => {
    jest.useFakeTimers(); // Jest's fake timers replace setTimeout, setImmediate and queueMicrotask: the store uses none
    try {
      const store = new InMemoryLockStore();
      const replies = Promise.all([
        store.set('n', 1),
        store.eval("return redis.call('incr', KEYS[1])", 1, 'n'),
        store.get('n'),
        store.eval("return redis.call('incrby', KEYS[1], ARGV[1])", 1, 'n', 10),
      ]);
      expect(await replies).toEqual(['OK', 2, '2', 12]);
      const messages: string[] = [];
      const subscriber = store.duplicate();
      subscriber.on('message', (_channel: string, message: string) => messages.push(message));
      await subscriber.subscribe('c');
      expect(await store.eval("return redis.call('publish', 'c', 'hello')", 0)).toBe(1);
      await store.ping();
      expect(messages).toEqual(['hello']);
    } finally {
      jest.useRealTimers();
    }
  });

  it("runs the library's Lua scripts through defineCommand (EVALSHA), and counts them", async () => {
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

  it("converts a script's result as Redis does: integers truncated, true 1, false nil, arrays up to the first nil", async () => {
    const store = new InMemoryLockStore();
    expect(await store.eval("return {1, 2.9, -2.9, 'x', true, false, nil, 5}", 0)).toEqual([1, 2, -2, 'x', 1, null]);
    expect(await store.eval("return {ok = 'FINE'}", 0)).toBe('FINE');
    expect(await store.eval("return {1, {ok = 'OK'}, {7, {'deep'}}}", 0)).toEqual([1, 'OK', [7, ['deep']]]);
    expect(await store.eval('return nil', 0)).toBeNull();
    await expect(store.eval("return redis.error_reply('MYERR told you')", 0)).rejects.toThrow(/^MYERR told you$/);
  });

  it('hands Lua replies as Redis does: nil as false, status as {ok}, errors raised by call, returned by pcall', async () => {
    const store = new InMemoryLockStore();
    await store.set('s', 'text');
    expect(await store.eval("return {redis.call('hget', 'h', 'f') == false and 1 or 0, redis.call('set', 'k', 'v').ok}", 0)).toEqual([1, 'OK']);
    const wrongType = "return redis.call('hget', 's', 'f')";
    await expect(store.eval(wrongType, 0)).rejects.toThrow(
      `WRONGTYPE Operation against a key holding the wrong kind of value script: ${sha1(wrongType)}, on @user_script:1.`,
    );
    expect(await store.eval("return redis.pcall('hget', 's', 'f').err", 0)).toMatch(/^WRONGTYPE/);
    // Redis 7.0's pcall turns the error table into its message.
    expect(await store.eval("local ok, e = pcall(redis.call, 'hget', 's', 'f'); return {tostring(ok), type(e)}", 0)).toEqual(['false', 'string']);
  });

  it('passes numbers to commands with 17 significant digits and keeps 64-bit integer arithmetic (not 32-bit, as fengari would)', async () => {
    const store = new InMemoryLockStore();
    await store.eval("redis.call('set', 'token', 1750000000123001); redis.call('set', 'tenth', 0.1); redis.call('set', 'big', 1e20)", 0);
    expect(await Promise.all(['token', 'tenth', 'big'].map((key) => store.get(key)))).toEqual(['1750000000123001', '0.10000000000000001', '1e+20']);
    expect(await store.eval('return tonumber(ARGV[1]) * 1000 + math.floor(tonumber(ARGV[2]) / 1000)', 0, '1750000000', '123456')).toBe(1_750_000_000_123);
    // Lua 5.1's tostring (%.14g), as Redis' Lua has it.
    expect(await store.eval('return {tostring(1750000000123001), tostring(10 / 2), _VERSION}', 0)).toEqual(['1.750000000123e+15', '5', 'Lua 5.1']);
  });

  it("reads TIME from the keyspace's clock", async () => {
    const { keyspace, advance } = manualClock();
    const store = new InMemoryLockStore({ keyspace });
    const before = await store.eval("return redis.call('time')", 0);
    advance(1_500);
    const after = (await store.eval("return redis.call('time')", 0)) as [string, string];
    const ms = ([seconds, micros]: [string, string]): number => Number(seconds) * 1000 + Number(micros) / 1000;
    expect(ms(after) - ms(before as [string, string])).toBe(1_500);
  });

  it('keeps globals read-only and says which commands it lacks', async () => {
    const store = new InMemoryLockStore();
    await expect(store.eval('x = 1', 0)).rejects.toThrow(/^ERR user_script:1: Attempt to modify a readonly table script: /);
    await expect(store.eval('return y', 0)).rejects.toThrow(/Script attempted to access nonexistent global variable 'y'/);
    await expect(store.eval("return redis.call('lpop', 'k')", 0)).rejects.toThrow(
      /^ERR Unknown Redis command called from script: the in-memory store .* not 'lpop'/,
    );
    await expect(store.eval("return redis.call('hget', 'k')", 0)).rejects.toThrow(/^ERR Wrong number of args calling Redis command from script/);
    await expect(store.eval("return redis.call('set', 'k', true)", 0)).rejects.toThrow(/^ERR Lua redis lib command arguments must be strings or integers/);
    expect(await store.eval('return {type(io), type(os), type(debug)}', 0).catch((error: Error) => error.message)).toMatch(/nonexistent global variable 'io'/);
  });

  it('keeps a script cache as Redis does: NOSCRIPT until EVAL or SCRIPT LOAD, compile errors reported', async () => {
    const store = new InMemoryLockStore();
    const other = store.duplicate();
    const lua = "return 'hello'";
    await expect(store.evalsha(sha1(lua), 0)).rejects.toThrow(/^NOSCRIPT/);
    expect(await store.eval(lua, 0)).toBe('hello');
    expect(await other.evalsha(sha1(lua), 0)).toBe('hello'); // the cache is the server's, not the connection's
    expect(await store.script('LOAD', 'return 2')).toBe(sha1('return 2'));
    expect(await store.script('EXISTS', sha1('return 2'), 'f'.repeat(40))).toEqual([1, 0]);
    await expect(store.script('LOAD', 'return +')).rejects.toThrow(/^ERR Error compiling script \(new function\): user_script:1: unexpected symbol near/);
    await expect(store.eval('return 1', 2, 'a')).rejects.toThrow("ERR Number of keys can't be greater than number of args");
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
