import { whenLuaLoaded } from '../../memory/lua-vm.js';
import { MemoryKeyspace } from '../../memory/memory-keyspace.js';
import { EXCLUSIVE_MESSAGES, GRANT_LEASE_MS } from './exclusive/exclusive.messages.js';
import { FREED_LUA, FREED_MESSAGES } from './freed.message.js';
import { grantedMessageLua } from './granted.message.js';
import { nextMessageLua, SEMAPHORE_GRANT_LEASE_MS, SEMAPHORE_MESSAGES } from './semaphore/semaphore.messages.js';

/**
 * Each kind's messages as its Lua writes them (the very expressions its scripts are built with, run in
 * the embedded Lua VM) and as its codec reads them: the two sides of one protocol, kept side by side in
 * the kind's folder, must agree.
 */
function luaMessage(locals: string, expression: string): Promise<string> {
  const script = `${locals}\nreturn ${expression}\n`;
  return whenLuaLoaded((vm) => String(vm.run(new MemoryKeyspace(), vm.compile(script), [], [])));
}

describe('lock kinds: channel messages, written in Lua and decoded', () => {
  it('released: every kind wakes its first waiter', async () => {
    const message = await luaMessage('', FREED_LUA);
    for (const messages of [EXCLUSIVE_MESSAGES, FREED_MESSAGES, SEMAPHORE_MESSAGES]) expect(messages.decode(message)).toEqual({ type: 'freed' });
  });

  it("the plain lock's grant names the waiting caller, its token and lease end, and when other processes look again", async () => {
    const locals = `local next_owner, token, lease_end = 'c0ffee:3', 1795737600466002, 1795737600716`;
    const message = await luaMessage(locals, grantedMessageLua('next_owner', 'token', 'lease_end'));
    expect(EXCLUSIVE_MESSAGES.decode(message)).toEqual({
      type: 'addressed',
      owner: 'c0ffee:3',
      grant: { token: 1795737600466002, expiresAtServerMs: 1795737600716, leaseMs: GRANT_LEASE_MS },
      othersLookAfterMs: GRANT_LEASE_MS + 20,
    });
  });

  it("a semaphore's grant names the waiter (an owner id with ':'), its token in full, and its lease end", async () => {
    const locals = `local first, token, lease_end = 'c0ffee:17', 1795737600466001, 1795737600716`;
    const message = await luaMessage(locals, grantedMessageLua('first', 'token', 'lease_end'));
    expect(SEMAPHORE_MESSAGES.decode(message)).toEqual({
      type: 'addressed',
      owner: 'c0ffee:17',
      grant: { token: 1795737600466001, expiresAtServerMs: 1795737600716, leaseMs: SEMAPHORE_GRANT_LEASE_MS },
    });
  });

  it("a semaphore's refusal of a request larger than its size wakes that waiter, granting nothing", async () => {
    const message = await luaMessage(`local first = 'c0ffee:18'`, nextMessageLua('first'));
    expect(SEMAPHORE_MESSAGES.decode(message)).toEqual({ type: 'addressed', owner: 'c0ffee:18', grant: undefined });
  });

  it('a grant whose numbers cannot be read only wakes its waiter', () => {
    expect(SEMAPHORE_MESSAGES.decode('granted:c0ffee:17:x:y')).toEqual({ type: 'addressed', owner: 'c0ffee:17', grant: undefined });
  });
});
