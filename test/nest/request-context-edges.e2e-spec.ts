import 'reflect-metadata';
import { Controller, Injectable, Module, Post, Req, UseGuards, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { LockService, type LockHandle } from 'nestjs-distributed-lock';
import { DistributedLockTestingModule } from 'nestjs-distributed-lock/testing';

/*
 * Where the request's lock context starts, as docs/concepts/owners-and-contexts.md says: at the
 * global interceptor, so a guard (which Nest runs before interceptors) takes its locks outside it.
 * The handler then is another owner: it does not re-enter the guard's lock, while it re-enters its
 * own. On the in-memory store: no Redis needed.
 */

type GuardedRequest = { guardLock?: LockHandle };

@Injectable()
class LockingGuard implements CanActivate {
  constructor(private readonly locks: LockService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    context.switchToHttp().getRequest<GuardedRequest>().guardLock = await this.locks.lock('edge:guard', '5s');
    return true;
  }
}

@Controller('edges')
class EdgesController {
  constructor(private readonly locks: LockService) {}

  @Post('guarded')
  @UseGuards(LockingGuard)
  async guarded(@Req() req: GuardedRequest): Promise<{ reentersGuardLock: boolean; reentersOwnLock: boolean; sameToken: boolean }> {
    const fromGuard = await this.locks.tryLock('edge:guard'); // no wait: false unless this owner holds it
    const own = await this.locks.lock('edge:handler', '5s');
    const again = await this.locks.tryLock('edge:handler');
    const result = { reentersGuardLock: fromGuard !== false, reentersOwnLock: again !== false, sameToken: again !== false && again.token === own.token };
    if (fromGuard) await fromGuard.unlock();
    if (again) await again.unlock();
    await own.unlock();
    await req.guardLock!.unlock(); // the guard's lock is released through its handle
    return result;
  }
}

@Module({ imports: [DistributedLockTestingModule.forRoot()], controllers: [EdgesController], providers: [LockingGuard] })
class AppModule {}

describe("the request's lock context starts after guards", () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("a guard's lock is another owner than the handler: not re-entered, while the handler re-enters its own", async () => {
    const { body } = await request(app.getHttpServer()).post('/edges/guarded').expect(201);
    expect(body).toEqual({ reentersGuardLock: false, reentersOwnLock: true, sameToken: true });
    expect(await app.get(LockService).isLocked('edge:guard')).toBe(false);
  });
});
