import 'reflect-metadata';
import {
  CallHandler,
  Controller,
  Injectable,
  Post,
  RequestTimeoutException,
  UseInterceptors,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { catchError, Observable, throwError, timeout, TimeoutError, VirtualTimeScheduler } from 'rxjs';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, LockService } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';

/**
 * The time of the timeout interceptor below: it passes only when the test says so (`flush()` runs every
 * timeout due), so a request times out while its handler is inside, however slow the machine is (with
 * real time, a 100 ms limit ran out before the lock was taken on a loaded machine, and the handler
 * never entered).
 */
const timeouts = new VirtualTimeScheduler();

/** Nest's documented timeout interceptor, with the limit taken from a header so each request picks its own. */
@Injectable()
class TimeoutInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const limit = Number(context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-timeout'] ?? 5000);
    return next.handle().pipe(
      timeout({ each: limit, scheduler: timeouts }),
      catchError((error: unknown) => throwError(() => (error instanceof TimeoutError ? new RequestTimeoutException() : error))),
    );
  }
}

/** Sees every moment two handlers of a route are inside at once. */
class OverlapChecker {
  inside = 0;
  overlaps = 0;
  entered = 0;
  private gates: (() => void)[] = [];

  async run(): Promise<{ ok: true }> {
    this.entered += 1;
    this.inside += 1;
    if (this.inside > 1) this.overlaps += 1;
    await new Promise<void>((resolve) => this.gates.push(resolve));
    this.inside -= 1;
    return { ok: true };
  }

  /** Lets the oldest handler still inside finish. */
  openOne(): void {
    this.gates.shift()?.();
  }
}

const locked = new OverlapChecker();
const unlocked = new OverlapChecker();

@Controller()
@UseInterceptors(TimeoutInterceptor) // outside @DistributedLock's interceptor, as a controller- or app-level interceptor is
class SlowController {
  @Post('locked')
  @DistributedLock({ name: 'slow', waitTime: '10s' })
  locked(): Promise<{ ok: true }> {
    return locked.run();
  }

  @Post('unlocked')
  unlocked(): Promise<{ ok: true }> {
    return unlocked.run();
  }
}

describe('an outer timeout() ends the request while the decorated handler still runs', () => {
  const redis = useRedis();
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      controllers: [SlowController],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('control: without a lock, a second request enters while the first handler still runs', async () => {
    const server = app.getHttpServer();
    const first = request(server)
      .post('/unlocked')
      .set('x-timeout', '100')
      .then((response) => response);
    await until(() => unlocked.inside === 1, 'the first handler to enter');
    timeouts.flush(); // its 100 ms pass
    expect((await first).status).toBe(408);
    const second = request(server)
      .post('/unlocked')
      .set('x-timeout', '10000')
      .then((response) => response);
    await until(() => unlocked.entered === 2, 'the second handler to enter');
    expect(unlocked.overlaps).toBe(1);
    unlocked.openOne();
    unlocked.openOne();
    expect((await second).status).toBe(201);
  });

  it('with @DistributedLock the lock stays held until the first handler ends: the second waits, then runs', async () => {
    const server = app.getHttpServer();
    const locks = app.get(LockService);
    // The first request times out (408) while its handler is still inside.
    const first = request(server)
      .post('/locked')
      .set('x-timeout', '100')
      .then((response) => response);
    await until(() => locked.inside === 1, 'the first handler to enter');
    timeouts.flush(); // its 100 ms pass
    expect((await first).status).toBe(408);
    expect(locked.inside).toBe(1);
    expect(await locks.isLocked('slow')).toBe(true);

    const waiting = nextEvent(locks.events, 'subscription', (event: { subscribed: boolean }) => event.subscribed);
    const second = request(server)
      .post('/locked')
      .set('x-timeout', '10000')
      .then((response) => response);
    await waiting; // the second request waits for the lock
    expect(locked.entered).toBe(1);

    locked.openOne(); // the first handler ends: its lock is released, the second enters
    await until(() => locked.entered === 2, 'the second handler to enter');
    locked.openOne();
    expect((await second).status).toBe(201);
    expect(locked.overlaps).toBe(0);
    await until(async () => !(await locks.isLocked('slow')), 'the lock to be released');
  });
});
