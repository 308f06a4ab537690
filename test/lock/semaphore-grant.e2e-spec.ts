import { LockAcquireAbortedError, type LockClient, type LockClientOptions } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/**
 * A semaphore's hand-over with no round trip after the release: the release's script grants the freed
 * permits to the first waiter in line and says so on the channel (`granted:<owner>:<token>:<lease end>`);
 * the waiter, in another process, holds them from that message on, without an attempt of its own, and
 * gives the hold its own lease in the background (a claim). The attempts are counted on the waiting
 * semaphore object (its internal `attempt`, which every acquire script call goes through).
 */
describe('a semaphore release grants its permits to the first waiter', () => {
  const redis = useRedis();

  /** A holder in one client, a waiter queued behind it in another; the waiter's attempts counted. */
  async function waiterBehindHolder(name: string, options: LockClientOptions = {}, signal?: AbortSignal, leaseTime = '10s') {
    const holderClient = await redis.client(options);
    const waiterClient = await redis.client(options);
    const semaphore = holderClient.getSemaphore(name, { size: 1 });
    const held = await semaphore.acquire(1, '10s');
    const waiting = waiterClient.getSemaphore(name, { size: 1 });
    let attempts = 0;
    let answered = 0;
    const attempt = (waiting as unknown as { attempt: (...args: unknown[]) => Promise<unknown> }).attempt.bind(waiting);
    (waiting as unknown as { attempt: (...args: unknown[]) => Promise<unknown> }).attempt = (...args: unknown[]) => {
      attempts += 1;
      return attempt(...args).finally(() => (answered += 1));
    };
    const acquiring = waiting.acquire(1, { leaseTime, waitTime: '5s', ...(signal ? { signal } : {}) });
    // Its first attempt queues it in Redis; the one once it is subscribed finds the permit still taken.
    await until(() => Promise.resolve(answered === 2), 'the waiter to queue and subscribe');
    expect(await semaphore.queueLength()).toBe(1);
    return { held, acquiring, semaphore, waiterClient, attempts: () => attempts };
  }

  async function leaseLeft(client: LockClient, name: string): Promise<number> {
    const inspection = await client.getSemaphore(name, { size: 1 }).inspect();
    return inspection.permitHolders[0]?.remainingLeaseMs ?? 0;
  }

  it('the waiter holds the permits from the release message, with no attempt of its own after the release, and claims its own lease', async () => {
    const { held, acquiring, semaphore, waiterClient, attempts } = await waiterBehindHolder('grant:message');
    const before = attempts();
    expect(before).toBe(2);
    await held.release();
    const next = await acquiring;
    expect(attempts()).toBe(before);
    expect(next.isHeld).toBe(true);
    expect(next.token).toBeGreaterThan(held.token);
    expect(await semaphore.availablePermits()).toBe(0);
    // The claim gives the grant's short lease (250 ms) the waiter's own (10 s).
    await until(async () => (await leaseLeft(waiterClient, 'grant:message')) > 5_000, 'the claim');
    expect(next.isHeld).toBe(true);
    await next.release();
    expect(await semaphore.availablePermits()).toBe(1);
  });

  it("a waiter that asked for a lease shorter than the grant's holds the permits for its own lease, not the grant's", async () => {
    // The claim sets the lease in Redis to the waiter's 100 ms, shorter than what was left of the
    // grant's 250 ms: the local deadline must move earlier with it (it used to keep the grant's, so the
    // waiter held the permit for up to 150 ms after Redis had given it to the next caller; found by the
    // simulator).
    const { held, acquiring, semaphore, waiterClient } = await waiterBehindHolder('grant:short', {}, undefined, '100ms');
    await held.release();
    const granted = await acquiring;
    await until(async () => (await leaseLeft(waiterClient, 'grant:short')) <= 100, 'the claim of the short lease');
    const next = await semaphore.tryAcquire(1, { waitTime: '3s', leaseTime: '10s' });
    expect(next).not.toBe(false);
    expect(granted.isHeld).toBe(false); // the permit is the next caller's now: nobody else may think it holds it
    if (next) await next.release();
  });

  it('control: where the server clock is not bounded (a node of several servers), the waiter takes the grant with an attempt', async () => {
    // oneSlotPerScript: the client treats its endpoint as several servers, so a clock sample bounds nothing.
    const { held, acquiring, attempts } = await waiterBehindHolder('grant:attempt', { oneSlotPerScript: true });
    const before = attempts();
    await held.release();
    const next = await acquiring;
    expect(attempts()).toBe(before + 1); // the one that found the grant in its name
    expect(next.isHeld).toBe(true);
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
  });

  it('a waiter that gives up as the release grants it the permit gives it back at once, not after the grant lease', async () => {
    const controller = new AbortController();
    const { held, acquiring, semaphore } = await waiterBehindHolder('grant:declined', {}, controller.signal);
    const releasing = held.release(); // Redis grants the permit to the waiter, first in line
    controller.abort(); // the waiter stops waiting before its process can hear the grant
    await releasing;
    await expect(acquiring).rejects.toBeInstanceOf(LockAcquireAbortedError);
    // The acquisition's clean-up (its leave) has run: the grant is given back, not left for its 250 ms lease.
    expect(await semaphore.availablePermits()).toBe(1);
    expect((await semaphore.inspect()).permitHolders).toEqual([]);
  });

  it("a grant goes to the waiting process's channel only, however many processes wait", async () => {
    const [holderClient, first, second] = [await redis.client(), await redis.client(), await redis.client()];
    const semaphore = (client: LockClient) => client.getSemaphore('grant:addressed', { size: 1 });
    const heard: [string, string][] = [];
    const listener = redis.server().client();
    listener.on('pmessage', (_pattern: string, channel: string, message: string) => heard.push([channel, message]));
    await listener.psubscribe('lock:{grant:addressed}:semaphore:released*');
    const held = await semaphore(holderClient).acquire(1, '10s');
    const firstWaits = semaphore(first).acquire(1, { leaseTime: '10s', waitTime: '5s' });
    await until(async () => (await semaphore(holderClient).queueLength()) === 1, 'the first waiter to queue');
    const secondWaits = semaphore(second).acquire(1, { leaseTime: '10s', waitTime: '5s' });
    await until(async () => (await semaphore(holderClient).queueLength()) === 2, 'the second waiter to queue');
    // Each waiting process listens on a channel of its own.
    const [firstChannel, secondChannel] = [semaphore(first).channel, semaphore(second).channel];
    expect(firstChannel).not.toBe(secondChannel);
    const admin = redis.server().client();
    const numsub = async (): Promise<string> => ((await admin.pubsub('NUMSUB', firstChannel, secondChannel)) as unknown[]).join();
    await until(async () => (await numsub()) === [firstChannel, 1, secondChannel, 1].join(), 'both to subscribe');
    await held.release();
    const next = await firstWaits;
    await until(() => Promise.resolve(heard.length >= 1), 'the grant message');
    // One message, on the first waiter's channel alone: the second waiting process was not woken by it.
    expect(heard).toEqual([[firstChannel, expect.stringMatching(/^granted:/)]]);
    await next.release();
    await (await secondWaits).release();
    await until(() => Promise.resolve(heard.length >= 2), 'the second grant message');
    expect(heard.map(([channel]) => channel)).toEqual([firstChannel, secondChannel]);
    await listener.punsubscribe();
    listener.disconnect();
    admin.disconnect();
  });
});
