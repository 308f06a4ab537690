import { reentrantAcquire } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { fairLeave } from '../../libs/distributed-lock/src/core/locks/fair/fair-leave.script.js';
import type { LockScript } from '../../libs/distributed-lock/src/core/scripts/lock-script.js';
import { reentrantWithdraw } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-withdraw.script.js';
import { useRedis } from '../harness/use-redis.js';

/**
 * A caller willing to wait that is aborted while its first attempt is on its way to Redis: the attempt
 * may still mark its process as waiting there, so the process withdraws (unmarks) in the background.
 * The withdrawal must run after the abandoned attempt, not merely be sent after it: a script Redis does
 * not have cached yet (after a restart, a failover, SCRIPT FLUSH) is sent again as EVAL when its
 * EVALSHA fails, behind whatever was sent after it. A mark left behind makes the next release grant
 * the lock to a process that does not wait for it, and everyone else waits out the grant's lease.
 */
describe('an aborted attempt is withdrawn after it has run, even when Redis had to be sent its script again', () => {
  const redis = useRedis();

  async function marks(name: string): Promise<string[]> {
    const fields = await redis.server().client().hkeys(`lock:{${name}}`);
    return fields.filter((field) => field.startsWith('w:'));
  }

  /** The scripts' cache as after a restart, except for the clean-up's script. */
  async function onlyCached(script: LockScript<never, unknown>): Promise<void> {
    const admin = redis.server().client();
    await admin.script('FLUSH');
    await admin.script('LOAD', script.lua);
  }

  it('the mark of an aborted first attempt is gone once the client has done its background work', async () => {
    const holderClient = await redis.client();
    const aborted = await redis.client();
    const holder = await holderClient.lock('order:abort', '30s');
    await onlyCached(reentrantWithdraw);
    const controller = new AbortController();
    const attempt = aborted.lock('order:abort', { signal: controller.signal });
    controller.abort(); // the attempt's EVALSHA is written; its reply will be NOSCRIPT, then EVAL marks
    await expect(attempt).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_ABORTED' });
    await aborted.close(); // waits for the client's background work (the withdrawal), and adds no clean-up of marks
    expect(await marks('order:abort')).toEqual([]);
    await holder.unlock();
    expect(await redis.server().client().exists('lock:{order:abort}')).toBe(0); // not granted to the process that gave up
  });

  it("the same for a fair lock: an aborted caller's attempt leaves no entry in the lock's queue", async () => {
    const holderClient = await redis.client();
    const aborted = await redis.client();
    const holder = await holderClient.getFairLock('order:fair').lock('30s');
    await onlyCached(fairLeave);
    const controller = new AbortController();
    const attempt = aborted.getFairLock('order:fair').lock({ signal: controller.signal });
    controller.abort(); // the attempt's EVALSHA is written; after its NOSCRIPT reply, EVAL queues the caller
    await expect(attempt).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_ABORTED' });
    const keys = await redis.server().client().keys('lock:{order:fair}*');
    expect(keys.sort()).toEqual(['lock:{order:fair}:fair']); // no queue
    await holder.unlock();
  });

  it('control: the withdrawal sent right behind the attempt runs first, and the mark stays', async () => {
    const holderClient = await redis.client();
    const holder = await holderClient.lock('order:control', '30s');
    await onlyCached(reentrantWithdraw);
    const raw = redis.server().client().duplicate();
    try {
      const names = { lock: 'lock:{order:control}', fence: 'lock:{order:control}:fence', channel: 'lock:{order:control}:released' };
      const acquire = {
        ...names,
        owner: 'other-process:1',
        leaseMs: 30_000,
        waitingClient: 'other-process',
        queue: 'not-queued',
        watchdog: true,
        firstIfFailed: 'other-process:1',
        firstIfAcquired: '',
      } as const;
      const withdraw = { ...names, client: 'other-process', owner: 'other-process:1', publish: 'publish', grantLeaseMs: 2000 } as const;
      const run = <A>(script: LockScript<A, unknown>, args: A) =>
        raw.evalsha(script.sha, script.keys(args).length, ...script.keys(args), ...script.argv(args)).catch((error: Error) => {
          if (!error.message.startsWith('NOSCRIPT')) throw error;
          return raw.eval(script.lua, script.keys(args).length, ...script.keys(args), ...script.argv(args));
        });
      const sentAttempt = run(reentrantAcquire, acquire);
      const sentWithdrawal = run(reentrantWithdraw, withdraw);
      await Promise.all([sentAttempt, sentWithdrawal]);
      expect(await marks('order:control')).toEqual(['w:other-process']);
    } finally {
      raw.disconnect();
      await holder.unlock().catch(() => undefined);
    }
  });
});
