import 'reflect-metadata';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Injectable, Module, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedLock, DistributedLockModule, Leader, LockHandle, LockService, type LockClient } from 'nestjs-distributed-lock';
import { DistributedLockRunner } from '../../libs/distributed-lock/src/nest/distributed-lock.runner.js';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

/** The gate the test opens: a locked call sits in its critical section until told to finish. */
let gate: { enter: () => void; proceed: Promise<void> } | undefined;
function arm(): { inside: Promise<void>; finish: () => void } {
  let enter!: () => void;
  let finish!: () => void;
  const inside = new Promise<void>((resolve) => (enter = resolve));
  const proceed = new Promise<void>((resolve) => (finish = resolve));
  gate = { enter, proceed };
  return { inside, finish };
}
async function criticalSection(): Promise<void> {
  const current = gate!;
  current.enter();
  await current.proceed;
}

@Injectable()
class Worker {
  handle: LockHandle | undefined;
  constructor(private readonly locks: LockService) {}

  @DistributedLock({ nameFromArgs: (id: string) => `work:${id}` })
  async work(id: string): Promise<string> {
    this.handle = this.locks.currentLock();
    await criticalSection();
    return `finished ${id}`;
  }

  @DistributedLock({ nameFromArgs: (id: string) => `quick:${id}`, leaseTime: '20s', lockAtLeastFor: '15s' })
  async quick(_id: string): Promise<void> {}
}

@Controller()
class SlowController {
  @Post('slow')
  @DistributedLock('route:slow')
  async slow(): Promise<{ done: boolean }> {
    await criticalSection();
    return { done: true };
  }
}

/** Called when StubbornLeader starts leading. */
let leading: (() => void) | undefined;

@Injectable()
class StubbornLeader {
  /** Leads until the process ends, deaf to its signal: what shutdownTimeout bounds. */
  @Leader('shutdown:stubborn')
  async lead(): Promise<void> {
    leading?.();
    await new Promise(() => undefined);
  }
}

async function boot(port: number, shutdownTimeout: number, providers: (typeof Worker | typeof StubbornLeader)[] = [Worker]): Promise<INestApplication> {
  @Module({
    imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port }, shutdownTimeout })],
    providers,
    controllers: [SlowController],
  })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

/** Resolves when app.close() has started waiting for calls in flight, with how long it may wait. */
function drainStarted(app: INestApplication): Promise<number> {
  const runner = app.get(DistributedLockRunner);
  const drain = runner.drain.bind(runner);
  return new Promise((resolve) => {
    runner.drain = (timeoutMs: number) => {
      resolve(timeoutMs);
      return drain(timeoutMs);
    };
  });
}

describe('graceful shutdown of decorated calls', () => {
  const redis = useRedis();
  let other: LockClient;

  beforeEach(async () => {
    gate = undefined;
    other = await redis.client();
  });

  it('a provider call in progress when app.close() is called finishes and releases normally before the client closes', async () => {
    const app = await boot(redis.server().port, 20_000);
    const locks = app.get(LockService);
    const gate = arm();
    const call = app.get(Worker).work('a');
    await gate.inside;
    const lost: unknown[] = [];
    locks.events.on('lost', (event) => lost.push(event));
    const released = nextEvent(locks.events, 'released', (e: { name: string }) => e.name === 'work:a');
    const draining = drainStarted(app);
    const order: string[] = [];
    const closing = app.close().then(() => order.push('closed'));
    await draining;
    expect(await other.isLocked('work:a')).toBe(true);
    gate.finish();
    expect(await call.then((value) => (order.push('call'), value))).toBe('finished a');
    await released;
    await closing;
    expect(order).toEqual(['call', 'closed']);
    expect(lost).toEqual([]);
    expect(await other.isLocked('work:a')).toBe(false);
  });

  it('an HTTP request in flight gets its response before the server closes', async () => {
    const app = await boot(redis.server().port, 20_000);
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const gate = arm();
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/slow' }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    });
    await gate.inside;
    const draining = drainStarted(app);
    const closing = app.close();
    await draining;
    gate.finish();
    expect(await response).toEqual({ status: 201, body: JSON.stringify({ done: true }) });
    await closing;
    expect(await other.isLocked('route:slow')).toBe(false);
  });

  it('a call that outlasts shutdownTimeout has its lock released (signal aborted) and close does not hang', async () => {
    const app = await boot(redis.server().port, 200);
    const worker = app.get(Worker);
    const gate = arm();
    const call = worker.work('b');
    await gate.inside;
    await app.close();
    expect(worker.handle?.signal.aborted).toBe(true);
    expect(await other.isLocked('work:b')).toBe(false);
    // The call itself still finishes when its work does; its release finds nothing to release.
    gate.finish();
    expect(await call).toBe('finished b');
  });

  it("a leader that keeps the whole shutdownTimeout leaves the calls' drain none of its own: app.close() stays within one shutdownTimeout", async () => {
    const elected = new Promise<void>((resolve) => (leading = resolve));
    const app = await boot(redis.server().port, 600, [Worker, StubbornLeader]);
    await elected;
    const worker = app.get(Worker);
    const gate = arm();
    const call = worker.work('d');
    await gate.inside;
    const draining = drainStarted(app);
    const closing = app.close();
    // The drain follows the leaders' resignation; it had a whole shutdownTimeout of its own (600 here).
    expect(await draining).toBeLessThan(300);
    await closing;
    expect(worker.handle?.signal.aborted).toBe(true);
    expect(await other.isLocked('work:d')).toBe(false);
    gate.finish();
    expect(await call).toBe('finished d');
  });

  it('locks kept for lockAtLeastFor are released at shutdown', async () => {
    const app = await boot(redis.server().port, 1000);
    await app.get(Worker).quick('c');
    expect(await other.isLocked('quick:c')).toBe(true);
    await app.close();
    await until(async () => !(await other.isLocked('quick:c')), 'the deferred lock to be released');
  });
});

/** A handle whose lease ran out here while a renewal was on its way: not held as read, not lost. */
class RenewalInFlightHandle extends LockHandle {
  readonly name = 'in-flight';
  readonly token = 1;
  readonly signal: AbortSignal;
  readonly isHeld = false;
  unlocks = 0;

  constructor(lost: boolean) {
    super();
    const controller = new AbortController();
    if (lost) controller.abort(new Error('lost'));
    this.signal = controller.signal;
  }

  async unlock(): Promise<void> {
    this.unlocks += 1;
  }

  throwIfLost(): void {}
}

describe('the release after a decorated call', () => {
  const redis = useRedis();

  it('releases a lock that reads as not held but is not lost (its lease ran out during a renewal, which may keep it)', async () => {
    // Skipped before (`if (!isHeld) return`): the renewal kept the lock and the watchdog renewed it for good.
    const app = await boot(redis.server().port, 1000);
    try {
      const runner = app.get(DistributedLockRunner);
      const inFlight = new RenewalInFlightHandle(false);
      await runner.release(inFlight, { lockAtLeastMs: undefined } as never, 0);
      expect(inFlight.unlocks).toBe(1);
      // Control: a lock known to be lost is not released.
      const lost = new RenewalInFlightHandle(true);
      await runner.release(lost, { lockAtLeastMs: undefined } as never, 0);
      expect(lost.unlocks).toBe(0);
    } finally {
      await app.close();
    }
  });
});
