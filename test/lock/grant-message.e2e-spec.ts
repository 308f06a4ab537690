import { Redis } from 'ioredis';
import { LockClient, type LockClientOptions } from 'nestjs-distributed-lock';
import { GRANT_LEASE_MS } from '../../libs/distributed-lock/src/core/waiting/lock-line.js';
import { FaultProxy, stopAllFaultProxies } from 'redis-topology';
import { reentrantAcquire } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { nextEvent, until } from '../harness/wait.js';
import { useRedis } from '../harness/use-redis.js';

/**
 * A release in one process that grants the lock to another (the one that has waited longest) tells it
 * so in the grant's message: `grant:<client>:<token>:<expiry in server ms>`. The waiter proceeds on the
 * message, without a round trip of its own, and claims the grant in the background (the claim makes it
 * its owner's, with its lease). Until the claim lands, it holds the lock no longer than the grant's
 * short lease, placed on its own clock no later than the server's.
 *
 * To show that the waiter does not ask Redis, its command link runs through a fault proxy that holds
 * every byte, while its subscriber connects directly (the client's `duplicate()` gives the subscriber).
 */
describe('a waiter in another process proceeds on the grant message, without a round trip', () => {
  const redis = useRedis();
  const opened: Redis[] = [];
  afterEach(async () => {
    await stopAllFaultProxies();
    for (const connection of opened.splice(0)) connection.disconnect();
  });

  /** A client whose commands go through `proxy`, and whose subscriber connects to Redis directly. */
  async function clientBehind(proxy: FaultProxy, overrides: LockClientOptions = {}): Promise<LockClient> {
    const command = new Redis({ host: '127.0.0.1', port: proxy.port, lazyConnect: true, maxRetriesPerRequest: null });
    command.duplicate = ((options?: object) => {
      const subscriber = new Redis({ host: redis.server().host, port: redis.server().port, ...options });
      opened.push(subscriber);
      return subscriber;
    }) as Redis['duplicate'];
    opened.push(command);
    return redis.client({ connection: undefined, client: command, operationTimeout: '1s', ...overrides });
  }

  const owner = async (name: string): Promise<string | null> => redis.server().client().hget(`lock:{${name}}`, 'owner');
  const marks = async (name: string): Promise<string[]> => (await redis.server().client().hkeys(`lock:{${name}}`)).filter((field) => field.startsWith('w:'));

  /** What an attempt of `owner`, a caller of the process `client`, does in Redis now: {token, holds} or {0, pttl}. */
  async function attemptAs(name: string, owner: string, client: string): Promise<[number, number]> {
    const args = {
      lock: `lock:{${name}}`,
      fence: `lock:{${name}}:fence`,
      owner,
      leaseMs: 30_000,
      waitingClient: client,
      queue: 'not-queued',
      watchdog: true,
    } as const;
    const keys = reentrantAcquire.keys(args);
    return (await redis
      .server()
      .client()
      .eval(reentrantAcquire.lua, keys.length, ...keys, ...reentrantAcquire.argv(args))) as [number, number];
  }

  /** A holder (direct), and a waiter behind a proxy, queued and marked as waiting in Redis. */
  async function holderAndWaiter(name: string, waitTime: string) {
    const proxy = await FaultProxy.start({ targetPort: redis.server().port });
    const holderClient = await redis.client();
    const waiterClient = await clientBehind(proxy);
    const holder = await holderClient.lock(name, '30s');
    const queued = nextEvent(waiterClient.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
    const next = waiterClient.lock(name, { leaseTime: '5s', waitTime });
    await queued;
    await until(async () => (await marks(name)).length === 1, 'the waiter to be marked as waiting');
    return { proxy, holder, waiterClient, next, waiterId: (await marks(name))[0]!.slice(2) };
  }

  it('the waiter holds the lock while its command link is stalled, then its claim makes the grant its own', async () => {
    const { proxy, holder, next, waiterId } = await holderAndWaiter('grant:msg', '3s');
    proxy.blackhole(); // from now on the waiter reaches Redis no more (until heal)
    await holder.unlock();
    const handle = await next;
    expect(handle.token).toBeGreaterThan(holder.token);
    expect(await owner('grant:msg')).toBe(`${waiterId}:grant`); // the claim has not reached Redis
    // Another caller of the same process, attempting now (it did not hear the message), must not take
    // the grant over: the lock is held already, by the message. Only the claim, with the token, takes it.
    const other = await attemptAs('grant:msg', `${waiterId}:another-caller`, waiterId);
    expect(other[0]).toBe(0);
    expect(await owner('grant:msg')).toBe(`${waiterId}:grant`);
    proxy.heal();
    await until(async () => (await owner('grant:msg')) !== `${waiterId}:grant`, 'the claim to land');
    expect(await owner('grant:msg')).toMatch(new RegExp(`^${waiterId}:`));
    expect(await redis.server().client().pttl('lock:{grant:msg}')).toBeGreaterThan(4000); // the owner's lease, not the grant's
    expect(handle.isHeld).toBe(true);
    await handle.unlock();
    expect(await redis.server().client().exists('lock:{grant:msg}')).toBe(0);
  });

  it('control: on the message of the previous protocol (no token, no expiry), the waiter must ask Redis, and cannot', async () => {
    const { proxy, holder, next, waiterId } = await holderAndWaiter('grant:old', '1500ms');
    proxy.blackhole();
    // What a release of the previous protocol did: the grant in Redis, and a message naming only the client.
    const admin = redis.server().client();
    await admin.hset('lock:{grant:old}', 'owner', `${waiterId}:grant`, 'token', String(holder.token + 1));
    await admin.hdel('lock:{grant:old}', `w:${waiterId}`);
    await admin.pexpire('lock:{grant:old}', 10_000);
    await admin.publish('lock:{grant:old}:released', `grant:${waiterId}`);
    // Woken, it attempts to take the grant over, through the stalled link: Redis is unreachable to it.
    await expect(next).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
    proxy.heal();
    await admin.del('lock:{grant:old}');
  });

  it('a claim that cannot land within the grant lease loses the lock (the holder is told), and leaves the next holder alone', async () => {
    const { proxy, holder, waiterClient, next } = await holderAndWaiter('grant:late', '3s');
    proxy.blackhole();
    await holder.unlock();
    const handle = await next;
    const lost = nextEvent(waiterClient.events, 'lost', (e: { name: string }) => e.name === 'grant:late');
    await lost; // the grant's lease ran out with no claim landed
    expect(handle.isHeld).toBe(false);
    const thirdClient = await redis.client();
    const third = await thirdClient.lock('grant:late', { leaseTime: '30s', waitTime: `${4 * GRANT_LEASE_MS}ms` });
    proxy.heal(); // the held claim reaches Redis now, late: it must not take the lock from `third`
    await waiterClient.close();
    expect(await owner('grant:late')).not.toContain(':grant');
    expect(await thirdClient.isLocked('grant:late')).toBe(true);
    expect(await redis.server().client().hget('lock:{grant:late}', 'token')).toBe(String(third.token));
    await third.unlock();
  });
});
