import { LockAcquireTimeoutError, LockQuorumError } from 'nestjs-distributed-lock';
import { nextEvent } from '../../harness/wait.js';
import { reentrantAcquire } from '../../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { itFull, type ModeFixture } from '../fixture.js';

export function tryLockSuite(fx: ModeFixture): void {
  describe('tryLock and bounded waits', () => {
    it('without a wait time it answers false at once when the lock is taken', async () => {
      const client = await fx.client();
      const holder = await client.lock('try:a');
      const failed = nextEvent(client.events, 'failed');
      expect(await client.tryLock('try:a')).toBe(false);
      expect((await failed)[0]).toMatchObject({ name: 'try:a', outcome: 'timeout' });
      expect(client.stats().waitingChannels).toBe(0); // no wait: no subscription was made
      await holder.unlock();
      const handle = await client.tryLock('try:a');
      expect(handle).not.toBe(false);
      if (handle) await handle.unlock();
    });

    it('with a wait time it gets the lock when the holder releases within it', async () => {
      const client = await fx.client();
      const holder = await client.lock('try:b');
      const pending = client.tryLock('try:b', '10s');
      await nextEvent(client.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      await holder.unlock();
      const handle = await pending;
      expect(handle).not.toBe(false);
      if (handle) {
        expect(handle.token).toBeGreaterThan(holder.token);
        await handle.unlock();
      }
    });

    itFull(fx)('a wait that runs out makes no attempt after its deadline', async () => {
      const client = await fx.client();
      const holder = await client.lock('try:g', '30s');
      // Count the acquire scripts this client sends (on its first node: once per attempt in every mode).
      const attempts = fx.countScriptSends(client, reentrantAcquire.sha);
      try {
        expect(await client.tryLock('try:g', 300)).toBe(false);
      } finally {
        attempts.restore();
      }
      // The first attempt, and one retry once subscribed; the sleep that ends at the deadline ends the wait.
      expect(attempts.count).toBe(2);
      await holder.unlock();
    });

    itFull(fx)('answers false when the lock stays taken for the whole wait', async () => {
      const client = await fx.client();
      const holder = await client.lock('try:c', '30s');
      expect(await client.tryLock('try:c', 150, '1s')).toBe(false);
      expect(await client.tryLock('try:c', { waitTime: 100 })).toBe(false);
      expect(holder.isHeld).toBe(true);
      await holder.unlock();
    });

    it('lock() with waitTime throws a typed timeout carrying the holder remaining lease', async () => {
      const client = await fx.client();
      const holder = await client.lock('try:d', '20s');
      const error = await client.lock('try:d', { waitTime: 100 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockAcquireTimeoutError);
      expect((error as LockAcquireTimeoutError).code).toBe('LOCK_ACQUIRE_TIMEOUT');
      expect((error as LockAcquireTimeoutError).remainingLeaseMs).toBeGreaterThan(15_000);
      // An explicit lease, and no hold of this name seen yet here: retry when the lease ends.
      expect((error as LockAcquireTimeoutError).retryAfterMs).toBe((error as LockAcquireTimeoutError).remainingLeaseMs);
      await holder.unlock();
    });

    it('a storm of tryLock on one key: one winner at most (exactly one on a single node); the others get false', async () => {
      const clients = await Promise.all([1, 2, 3, 4].map(() => fx.client()));
      // Each client's first call also reads the server's clock before its script goes out. RedLock
      // bounds every node's answer by 50 ms (REDLOCK_NODE_TIMEOUT_MS, less with a short operationTimeout) counted from before
      // that read, and a stall of this process in between (a loaded machine) failed every node at
      // once: "only 0 of 3 Redis nodes answered". The storm is about contention, so the clients make
      // that first call before it.
      await Promise.all(clients.map(async (client, i) => (await client.lock(`try:storm:warm-up:${i}`)).unlock()));
      // RedLock: a node whose reply still comes later than 50 ms (its server was descheduled) counts as
      // not answering; with two such nodes a caller gets the typed LockQuorumError instead of false.
      // Every storm is checked; one where a node did not answer in time is run again on a fresh key,
      // until a storm that every node answered (at most five storms).
      for (let storm = 1; ; storm++) {
        const name = `try:storm:${storm}`;
        const settled = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => clients[i % clients.length]!.tryLock(name, undefined, '30s')));
        const winners = settled.flatMap((result) => (result.status === 'fulfilled' && result.value !== false ? [result.value] : []));
        const errors = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
        await Promise.all(winners.map((winner) => winner.unlock()));
        // RedLock: contenders can split the nodes so that nobody gets a majority; waiting callers
        // then retry after a random pause. A tryLock without wait just answers false.
        if (fx.mode === 'redlock') {
          expect(winners.length).toBeLessThanOrEqual(1);
          expect(errors.filter((error) => !(error instanceof LockQuorumError))).toEqual([]);
          if (errors.length > 0 && storm < 5) continue;
        } else {
          expect(winners).toHaveLength(1);
        }
        expect(errors).toEqual([]);
        return;
      }
    });
  });
}
