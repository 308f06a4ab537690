import type { LockClient } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

/**
 * The plain lock's hand-over between processes: a release grants the lock to the first waiting caller
 * of the process that has waited longest (its owner id, named in the process's waiting mark), and says
 * so on the channel with the grant's token and lease end; that caller holds the lock from the message
 * on, with no attempt of its own after the release, and claims it with its own lease in the background.
 * Attempts are counted on the waiting lock object (its internal `attempt`, which every acquire script
 * call goes through).
 */
describe("a plain lock's release grants it to the first waiting caller of the process that waited longest", () => {
  const redis = useRedis();

  function countAttempts(lock: object): { attempts: () => number; answered: () => number } {
    let attempts = 0;
    let answered = 0;
    const target = lock as { attempt: (...args: unknown[]) => Promise<unknown> };
    const attempt = target.attempt.bind(lock);
    target.attempt = (...args: unknown[]) => {
      attempts += 1;
      return attempt(...args).finally(() => (answered += 1));
    };
    return { attempts: () => attempts, answered: () => answered };
  }

  /** The grants published on the lock's channel, as the test's own subscriber hears them. */
  async function grantsOn(name: string): Promise<{ grants: string[]; stop: () => void }> {
    const subscriber = redis.server().client().duplicate();
    const grants: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => {
      if (message.startsWith('granted:')) grants.push(message);
    });
    await subscriber.subscribe(`lock:{${name}}:released`);
    return { grants, stop: () => subscriber.disconnect() };
  }

  async function holderOf(client: LockClient, name: string): Promise<{ owner: string; grant: boolean; remainingLeaseMs: number } | undefined> {
    return (await client.inspect(name)).holder;
  }

  it("the waiter holds the lock from the message, with the grant's token and no attempt after the release, then claims its own lease", async () => {
    const holderClient = await redis.client();
    const waiterClient = await redis.client();
    const heard = await grantsOn('grant:msg');
    try {
      const held = await holderClient.lock('grant:msg', '10s');
      const waiting = waiterClient.getLock('grant:msg');
      const counted = countAttempts(waiting);
      const acquiring = waiting.lock({ leaseTime: '10s', waitTime: '5s' });
      // Its first attempt marks its process; the one once it is subscribed finds the lock still taken.
      await until(() => Promise.resolve(counted.answered() === 2), 'the waiter to mark its process and subscribe');
      await held.unlock();
      const next = await acquiring;
      expect(counted.attempts()).toBe(2);
      await until(() => Promise.resolve(heard.grants.length === 1), 'the grant on the channel');
      // granted:<owner>:<token>:<lease end>; owner ids contain ':', so the numbers are read from the end.
      const body = heard.grants[0]!.slice('granted:'.length);
      const end = body.lastIndexOf(':');
      const tokenAt = body.lastIndexOf(':', end - 1);
      expect(body.slice(0, tokenAt)).toBe((await holderOf(waiterClient, 'grant:msg'))?.owner);
      const token = body.slice(tokenAt + 1, end);
      expect(next.token).toBe(Number(token));
      expect(next.isHeld).toBe(true);
      // The claim gives the grant's short lease (500 ms) the waiter's own (10 s), and it is no longer a grant.
      await until(async () => {
        const holder = await holderOf(waiterClient, 'grant:msg');
        return holder !== undefined && !holder.grant && holder.remainingLeaseMs > 5_000;
      }, 'the claim');
      expect(next.isHeld).toBe(true);
      await next.unlock();
      expect(await redis.server().client().exists('lock:{grant:msg}')).toBe(0);
    } finally {
      heard.stop();
    }
  });

  it('a grant to a caller of the process that stopped waiting is given back at once: the next caller there gets the lock, not after the grant ran out', async () => {
    const holderClient = await redis.client();
    const waiterClient = await redis.client({ clientId: 'giveback-process' });
    const held = await holderClient.lock('grant:back', '30s');
    const waiting = waiterClient.getLock('grant:back');
    const counted = countAttempts(waiting);
    const acquiring = waiting.lock({ leaseTime: '10s', waitTime: '8s' });
    await until(() => Promise.resolve(counted.answered() === 2), 'the waiter to mark its process and subscribe');
    // What a release leaves when the process's mark still names a caller that has since left: the lock
    // granted to that caller (an owner id of the waiting process that nobody there waits as), for 20 s
    // (a grant's lease is 500 ms: longer here, so that only a give-back explains a quick hand-over).
    const admin = redis.server().client();
    const token = Number(await admin.incr('lock:{grant:back}:fence'));
    await admin.hset('lock:{grant:back}', 'owner', 'giveback-process:999999', 'holds', 1, 'token', token, 'renew', 0, 'granted', 1);
    await admin.pexpire('lock:{grant:back}', 20_000);
    const [seconds] = await admin.time();
    await admin.publish('lock:{grant:back}:released', `granted:giveback-process:999999:${token}:${Number(seconds) * 1000 + 20_000}`);
    const next = await acquiring; // given back, then granted to the caller still waiting (its process's mark names it)
    expect(next.isHeld).toBe(true);
    expect(next.token).toBeGreaterThan(token);
    await next.unlock();
    await expect(held.unlock()).rejects.toMatchObject({ code: 'LOCK_NOT_HELD' }); // its lock was taken from it by the test
  });

  it('an attempt that finds its owner holding from before it was sent (a failover brought back a released hold or grant) takes the lock with a new token', async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    await client.runInNewContext(async () => {
      const first = await client.lock('grant:stale', '30s');
      const owner = (await client.inspect('grant:stale')).holder!.owner;
      const used = first.token as number;
      await first.unlock();
      // The state a promoted replica may hold: this owner's hold, with the token it used and released.
      await admin.hset('lock:{grant:stale}', 'owner', owner, 'holds', 1, 'token', used, 'renew', 0);
      await admin.pexpire('lock:{grant:stale}', 30_000);
      // A failover takes a while: the next attempt is sent well after that token was drawn (the server's ms x 1000).
      const serverMs = async (): Promise<number> => {
        const [seconds, micros] = await admin.time();
        return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      };
      await until(async () => (await serverMs()) > used / 1000 + 50, 'the server clock to pass the old token');
      const second = await client.lock('grant:stale', { leaseTime: '30s', waitTime: '5s' });
      expect(second.token).toBeGreaterThan(used); // not that token again (re-entered, it went out twice)
      expect(await admin.hget('lock:{grant:stale}', 'holds')).toBe('1');
      await second.unlock();
      // The same for a grant to this owner that it held by its message, claimed and released.
      const claimed = second.token as number;
      await admin.hset('lock:{grant:stale}', 'owner', owner, 'holds', 1, 'token', claimed, 'renew', 0, 'granted', 1);
      await admin.pexpire('lock:{grant:stale}', 30_000);
      await until(async () => (await serverMs()) > claimed / 1000 + 50, 'the server clock to pass the grant');
      const third = await client.lock('grant:stale', { leaseTime: '30s', waitTime: '5s' });
      expect(third.token).toBeGreaterThan(claimed);
      await third.unlock();
      expect(await admin.exists('lock:{grant:stale}')).toBe(0);
    });
  });
});
