import { Redis } from 'ioredis';
import { LockClient } from 'nestjs-distributed-lock';
import { reentrantAcquire } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { exclusiveRelease } from '../../libs/distributed-lock/src/core/locks/exclusive/exclusive-release.script.js';
import { readRelease, writeRelease } from '../../libs/distributed-lock/src/core/locks/read-write/read-write-release.script.js';
import { useRedis } from '../harness/use-redis.js';

/** ioredis' command object as sendCommand receives it (the part used here). */
interface SentCommand {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
}

/**
 * A connection that delivers chosen commands late: each rule holds back the first command it picks
 * `delayMs` before ioredis writes it, as a reconnect, a cluster's retry after a failover, or a NOSCRIPT
 * resend can deliver a command its caller has already given up on (or after a command sent later).
 * Everything else goes out at once. `late[i]` settles with what Redis replied to rule i's command.
 */
function holdingBack(port: number, rules: { pick: (command: SentCommand) => boolean; delayMs: number }[]): { redis: Redis; late: Promise<unknown>[] } {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 2 });
  const send = redis.sendCommand.bind(redis) as (command: SentCommand, stream?: unknown) => unknown;
  const pending = rules.map((rule) => {
    let settle!: (outcome: unknown) => void;
    return { ...rule, picked: false, late: new Promise<unknown>((resolve) => (settle = resolve)), settle: (outcome: unknown) => settle(outcome) };
  });
  (redis as unknown as { sendCommand: (command: SentCommand, stream?: unknown) => unknown }).sendCommand = (command, stream) => {
    const rule = pending.find((each) => !each.picked && each.pick(command));
    if (!rule) return send(command, stream);
    rule.picked = true;
    setTimeout(() => send(command, stream), rule.delayMs);
    command.promise.then(rule.settle, rule.settle);
    return command.promise;
  };
  return { redis, late: pending.map((rule) => rule.late) };
}

function delayingConnection(port: number, pick: (command: SentCommand) => boolean, delayMs: number): { redis: Redis; late: Promise<unknown> } {
  const { redis, late } = holdingBack(port, [{ pick, delayMs }]);
  return { redis, late: late[0]! };
}

const isAttemptOn = (name: string) => (command: SentCommand) =>
  command.name === 'evalsha' && command.args[0] === reentrantAcquire.sha && command.args.includes(`lock:{${name}}`);
const isReleaseOn = (name: string) => (command: SentCommand) =>
  command.name === 'evalsha' && command.args[0] === exclusiveRelease.sha && command.args.includes(`lock:{${name}}`);

/**
 * Reliability, "outages and abandoned work": an attempt whose caller has gone may still run in Redis
 * later. Whatever it would take must not be taken, and nothing may be held after a successful unlock().
 */
describe('an operation Redis runs after its caller gave up changes nothing', () => {
  const redis = useRedis();
  const OPERATION_TIMEOUT = 300;

  it('an attempt delivered after its operation timeout is refused: the owner that got the lock on a retry and unlocked it holds nothing', async () => {
    const { redis: connection, late } = delayingConnection(redis.server().port, isAttemptOn('late:retry'), 3 * OPERATION_TIMEOUT);
    const client = await LockClient.connect({ client: connection, operationTimeout: OPERATION_TIMEOUT });
    try {
      await client.runInNewContext(async () => {
        // The first attempt is held back and given up at the operation timeout; the caller waits on
        // through the failure and its retry takes the lock.
        const handle = await client.lock('late:retry', { waitTime: '5s' });
        await handle.unlock();
      });
      const reply = await late; // the first attempt reaches Redis only now, after the unlock
      expect(String(reply)).toMatch(/^ReplyError: DLOCK_LATE \d+$/);
      expect(await redis.server().client().exists('lock:{late:retry}')).toBe(0);
      expect(client.stats().held).toBe(0);
    } finally {
      await client.close();
      connection.disconnect();
    }
  });

  it('control: the same attempt without its deadline, delivered after the unlock, takes the lock for an owner that is done with it', async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    let owner = '';
    await client.runInNewContext(async () => {
      const handle = await client.lock('late:control', '30s');
      owner = (await admin.hget('lock:{late:control}', 'owner'))!;
      await handle.unlock();
    });
    const args = {
      lock: 'lock:{late:control}',
      fence: 'lock:{late:control}:fence',
      owner,
      leaseMs: 30_000,
      waitingClient: '',
      queue: 'not-queued',
      watchdog: true,
      firstIfFailed: '',
      firstIfAcquired: '',
    } as const;
    // What a late attempt did before attempts carried a deadline (without one, a guarded script runs unguarded).
    await admin.eval(reentrantAcquire.lua, 2, ...reentrantAcquire.keys(args), ...reentrantAcquire.argv(args));
    expect(await admin.hget('lock:{late:control}', 'owner')).toBe(owner);
    await admin.del('lock:{late:control}');
  });

  it("the owner's last unlock drops a hold Redis counts beyond what the owner took (a phantom), so nothing stays held", async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    await client.runInNewContext(async () => {
      const handle = await client.lock('late:phantom', '30s');
      await admin.hincrby('lock:{late:phantom}', 'holds', 1); // what a late grant to the same owner left
      await handle.unlock();
    });
    expect(await admin.exists('lock:{late:phantom}')).toBe(0);
  });

  it('a read or write release that names a token of an earlier lifetime changes nothing (a late grant given back after its lease ran out)', async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    const rw = client.getReadWriteLock('late:lifetime');
    const keys = { hash: 'lock:{late:lifetime}:rw', readers: 'lock:{late:lifetime}:rw:readers', channel: 'lock:{late:lifetime}:rw:released' };
    for (const [side, script] of [
      ['read', readRelease],
      ['write', writeRelease],
    ] as const) {
      await client.runInNewContext(async () => {
        const handle = await (side === 'read' ? rw.readLock() : rw.writeLock()).lock('30s');
        const owner = `${(await admin.hget('lock:{late:lifetime}:rw', side === 'read' ? 'writer' : 'writer')) ?? ''}`;
        const fields = await admin.hgetall(keys.hash);
        const holder =
          side === 'write'
            ? owner
            : Object.keys(fields)
                .find((field) => field.startsWith('r:'))!
                .slice(2);
        const stale = { ...keys, owner: holder, publish: 'publish', all: false, expectedHolds: undefined, token: handle.token - 1 } as const;
        expect(await admin.eval(script.lua, 3, ...script.keys(stale), ...script.argv(stale))).toBe(-1);
        expect(handle.isHeld).toBe(true);
        expect(await admin.hlen(keys.hash)).toBe(Object.keys(fields).length); // untouched
        const current = { ...stale, token: handle.token };
        expect(await admin.eval(script.lua, 3, ...script.keys(current), ...script.argv(current))).toBe(0); // control: its own token releases
      });
    }
  });

  it('control: the release as an unlock sent it before (one hold) leaves the phantom holding the lock', async () => {
    const client = await redis.client();
    const admin = redis.server().client();
    let owner = '';
    await client.runInNewContext(async () => {
      await client.lock('late:phantom-control', '30s');
      owner = (await admin.hget('lock:{late:phantom-control}', 'owner'))!;
      await admin.hincrby('lock:{late:phantom-control}', 'holds', 1);
    });
    const k = { lock: 'lock:{late:phantom-control}', fence: 'lock:{late:phantom-control}:fence', channel: 'lock:{late:phantom-control}:released' };
    const args = {
      ...k,
      owner,
      publish: 'publish',
      all: false,
      expectedHolds: undefined,
      grantLeaseMs: 250,
      stillWaitingClient: '',
      stillWaitingFirst: '',
      alwaysPublish: false,
      token: undefined,
    } as const;
    const remaining = await admin.eval(exclusiveRelease.lua, 3, ...exclusiveRelease.keys(args), ...exclusiveRelease.argv(args));
    expect(remaining).toBe(1);
    expect(await admin.hget('lock:{late:phantom-control}', 'owner')).toBe(owner);
    await client.forceUnlock('late:phantom-control');
  });

  it('close() waits for an attempt in flight, and gives back what its reply granted before it resolves (a rolling deploy)', async () => {
    // Found by the simulator: close() ended before an attempt's reply, which then granted the lock to
    // a process on its way out; an app that exits right after app.close() left it for its lease.
    const { redis: connection, late } = delayingConnection(redis.server().port, isAttemptOn('close:late'), 200);
    const client = await LockClient.connect({ client: connection, operationTimeout: 2000 });
    let answered = false;
    void late.then(() => (answered = true));
    try {
      const attempt = client.tryLock('close:late').catch((error: unknown) => error);
      await client.close();
      expect(answered).toBe(true); // the attempt's reply came before close() resolved
      expect(await redis.server().client().exists('lock:{close:late}')).toBe(0); // and what it granted was given back
      expect(await attempt).toMatchObject({ code: 'LOCK_CLIENT_CLOSED' });
    } finally {
      connection.disconnect();
    }
  });

  it("an owner's next attempt waits for the give-back of its attempt given up on: run after that attempt, it would drop the hold just taken", async () => {
    // Found by the simulator (a multi-lock re-attempting a lock after an attempt cut off): the give-back
    // met NOSCRIPT and was resent as EVAL after the next attempt had run, and freed what it took.
    const admin = redis.server().client();
    const { redis: connection, late } = holdingBack(redis.server().port, [
      { pick: isAttemptOn('giveback:x'), delayMs: 900 }, // cut off at the operation timeout: its outcome unknown
      { pick: isReleaseOn('giveback:x'), delayMs: 100 }, // the give-back, late but within its deadline
    ]);
    const client = await LockClient.connect({ client: connection, operationTimeout: 300 });
    try {
      for (const script of [reentrantAcquire, exclusiveRelease]) await admin.script('LOAD', script.lua); // no NOSCRIPT: one order only
      await client.runInNewContext(async () => {
        await expect(client.tryLock('giveback:x')).rejects.toMatchObject({ code: 'LOCK_BACKEND_ERROR' });
        await new Promise((resolve) => setImmediate(resolve)); // the give-back is on its way, alone
        const handle = await client.tryLock('giveback:x', { waitTime: '2s' });
        expect(handle).not.toBe(false);
        expect(await late[1]).toBe(-1); // the give-back ran before the attempt: nothing of the owner's to free
        expect(await admin.hget('lock:{giveback:x}', 'holds')).toBe('1'); // and the hold taken is still there
        if (handle) await handle.unlock();
      });
    } finally {
      await client.close();
      connection.disconnect();
    }
  });
});
