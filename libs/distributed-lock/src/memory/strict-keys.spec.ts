import { ScriptKeysError } from '../core/errors/script-keys.error.js';
import { InvalidLockConfigError } from '../core/errors/invalid-lock-config.error.js';
import { hashSlot, keySlot } from '../core/util/key-slot.js';
import { nameScript } from '../core/util/script-names.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';
import type { StrictKeys } from './strict-keys.js';

/** A script that writes KEYS[1] and then a key it builds itself (what Dragonfly refuses). */
const WRITES_UNDECLARED = `
redis.call('set', KEYS[1], ARGV[1])
redis.call('incr', KEYS[1] .. ':count')
return 'done'
`;

/** The same mistake, caught by the script itself with pcall: it must fail anyway. */
const HIDES_UNDECLARED = `
redis.call('set', KEYS[1], ARGV[1])
local ok = redis.pcall('get', 'elsewhere')
return 'done'
`;

/** Writes each of its declared keys: fine for any server as long as they share a slot. */
const WRITES_DECLARED = `
for i, key in ipairs(KEYS) do redis.call('set', key, ARGV[1]) end
return #KEYS
`;

const store = (strictKeys?: StrictKeys): InMemoryLockStore => new InMemoryLockStore({ strictKeys });

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe('strict keys (InMemoryLockStore)', () => {
  describe('a script that touches a key it did not declare', () => {
    it('control: runs with strict keys off, as on Redis and Valkey', async () => {
      const lax = store();
      expect(await lax.eval(WRITES_UNDECLARED, 1, 'order:{1}', 'x')).toBe('done');
      expect(await lax.get('order:{1}:count')).toBe('1');
    });

    it("is refused under 'declared', with an error naming the script, the command and the key", async () => {
      const strict = store('declared');
      const sha = await strict.script('LOAD', WRITES_UNDECLARED);
      nameScript(sha as string, 'test:writesUndeclared');
      const error = await rejection(strict.evalsha(sha as string, 1, 'order:{1}', 'x'));
      expect(error).toBeInstanceOf(ScriptKeysError);
      expect(error).toMatchObject({ code: 'LOCK_SCRIPT_KEYS', reason: 'undeclared-key', key: 'order:{1}:count' });
      expect((error as Error).message).toContain('test:writesUndeclared');
      expect((error as Error).message).toContain('INCR on "order:{1}:count"');
      expect((error as Error).message).toContain('declared: "order:{1}"');
      // It stopped at the refused command, as Dragonfly's scripts do: the key was never written.
      expect(await strict.get('order:{1}:count')).toBeNull();
    });

    it('fails even when the script catches the refusal with pcall', async () => {
      expect(await store().eval(HIDES_UNDECLARED, 1, 'a', 'x')).toBe('done'); // control
      const error = await rejection(store('declared').eval(HIDES_UNDECLARED, 1, 'a', 'x'));
      expect(error).toMatchObject({ reason: 'undeclared-key', key: 'elsewhere' });
    });

    it('names an unnamed script by its SHA1; a script that keeps to its KEYS runs', async () => {
      const strict = store('declared');
      const error = await rejection(strict.eval(`return redis.call('get', 'unnamed:key')`, 0));
      expect((error as Error).message).toMatch(/script [0-9a-f]{40} ran GET on "unnamed:key"/);
      expect(await strict.eval(WRITES_DECLARED, 2, 'a', 'b', 'x')).toBe(2);
      // DEL and EXISTS take several keys: each one must be declared.
      expect(await strict.eval(`return redis.call('del', KEYS[1], KEYS[2])`, 2, 'a', 'b')).toBe(2);
      const del = await rejection(strict.eval(`return redis.call('del', KEYS[1], 'b')`, 1, 'a'));
      expect(del).toMatchObject({ reason: 'undeclared-key', key: 'b' });
    });

    it('commands without keys (TIME, PUBLISH to a channel) need no declaration', async () => {
      const strict = store('one-slot');
      expect(await strict.eval(`redis.call('time') return redis.call('publish', 'some:channel', 'm')`, 1, 'anchor')).toBe(0);
    });
  });

  describe('a script whose declared keys lie in two cluster slots', () => {
    // 'a' and 'b' hash to different slots; '{a}:x' shares the slot of 'a' through its hash tag.
    const twoSlots = ['lock:{a}', 'lock:{b}'];
    const oneSlot = ['lock:{a}', 'lock:{a}:fence', 'other{a}'];

    it('the keys really are of two slots, and hash tags put the others in one', () => {
      expect(keySlot(twoSlots[0]!)).not.toBe(keySlot(twoSlots[1]!));
      expect(new Set(oneSlot.map(keySlot)).size).toBe(1);
    });

    it("control: runs with strict keys off and under 'declared' (a single Redis takes it)", async () => {
      expect(await store().eval(WRITES_DECLARED, 2, ...twoSlots, 'x')).toBe(2);
      expect(await store('declared').eval(WRITES_DECLARED, 2, ...twoSlots, 'x')).toBe(2);
    });

    it("is refused under 'one-slot' before it runs, naming both keys and their slots", async () => {
      const strict = store('one-slot');
      const error = await rejection(strict.eval(WRITES_DECLARED, 2, ...twoSlots, 'x'));
      expect(error).toBeInstanceOf(ScriptKeysError);
      expect(error).toMatchObject({ code: 'LOCK_SCRIPT_KEYS', reason: 'cross-slot', key: 'lock:{b}' });
      expect((error as Error).message).toContain(`"lock:{a}" (slot ${keySlot('lock:{a}')}) and "lock:{b}" (slot ${keySlot('lock:{b}')})`);
      expect(await strict.exists('lock:{a}')).toBe(0); // nothing ran
      expect(strict.keyspace.scriptCalls).toBe(0);
      expect(await strict.eval(WRITES_DECLARED, 3, ...oneSlot, 'x')).toBe(3);
    });

    it("'one-slot' refuses a script that declares no key (a sharded server cannot route it)", async () => {
      expect(await store('declared').eval(`return 1`, 0)).toBe(1); // control
      const error = await rejection(store('one-slot').eval(`return 1`, 0));
      expect(error).toMatchObject({ reason: 'no-keys' });
    });
  });

  it('records every refusal in the keyspace, seen by every connection, even when the caller swallowed the error', async () => {
    const strict = store('one-slot');
    const other = strict.duplicate();
    await other.eval(WRITES_UNDECLARED, 1, 'order:{1}', 'x').catch(() => undefined); // as background work would
    await strict.eval(WRITES_DECLARED, 2, 'lock:{a}', 'lock:{b}', 'x').catch(() => undefined);
    expect(strict.keyspace.scriptKeyViolations.map((error) => [error.reason, error.key])).toEqual([
      ['undeclared-key', 'order:{1}:count'],
      ['cross-slot', 'lock:{b}'],
    ]);
    expect(store().keyspace.scriptKeyViolations).toEqual([]); // control: another store's are its own
    await store().eval(WRITES_UNDECLARED, 1, 'order:{1}', 'x'); // and strict keys off records nothing
  });

  it('duplicates keep the mode; an unknown mode is a configuration error', () => {
    expect(store('one-slot').duplicate().strictKeys).toBe('one-slot');
    expect(store().strictKeys).toBe(false);
    expect(() => new InMemoryLockStore({ strictKeys: true as unknown as StrictKeys })).toThrow(InvalidLockConfigError);
  });

  it("computes Redis Cluster's slots (CRC16/XMODEM, hash tags)", () => {
    // Values from Redis' cluster specification and CLUSTER KEYSLOT.
    expect(hashSlot('123456789')).toBe(0x31c3 % 16384);
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
    expect(keySlot('foo{}{bar}')).toBe(hashSlot('foo{}{bar}')); // an empty tag: the whole key
    expect(keySlot('foo{{bar}}zap')).toBe(hashSlot('{bar'));
    expect(keySlot('foo{bar}{zap}')).toBe(hashSlot('bar'));
  });
});
