/** An HTTP app on Express or Fastify (ADAPTER=express|fastify), one process of the transport tests. */
import 'reflect-metadata';
import { Body, Controller, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CurrentLock, DistributedLock, type LockHandle } from 'nestjs-distributed-lock';
import { Counter, LineLogger, lockModule, RUN, serve, startBadApp } from './common.js';

@Controller()
class CounterController {
  constructor(private readonly counter: Counter) {}

  @Post('increment')
  @DistributedLock({ name: `${RUN}:counter`, waitTime: '10s' })
  increment(): Promise<number> {
    return this.counter.increment('locked');
  }

  @Post('increment-unlocked')
  incrementUnlocked(): Promise<number> {
    return this.counter.increment('unlocked');
  }

  @Post('busy')
  @DistributedLock({ name: `${RUN}:busy:{body.id}`, waitTime: 100 })
  busy(@Body() _body: { id?: string }): string {
    return 'ran';
  }

  @Post('crash')
  @DistributedLock(`${RUN}:crash`)
  crash(): never {
    throw new Error('the handler crashed');
  }

  @Post('lost')
  @DistributedLock({ name: `${RUN}:lost:{body.id}`, leaseTime: '100ms', onLost: 'abort-request' })
  async lost(@Body() _body: { id: string }, @CurrentLock() lock: LockHandle): Promise<string> {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return 'finished after its lock was lost';
  }
}

@Module({ imports: [lockModule()], controllers: [CounterController], providers: [Counter] })
class AppModule {}

/** `{data.id}` is an RPC and WebSocket root: an HTTP request never has it. */
@Controller()
class BadKeyController {
  @Post('bad')
  @DistributedLock('bad:{data.id}')
  bad(): string {
    return 'never';
  }
}

@Module({ imports: [lockModule()], controllers: [BadKeyController] })
class BadKeyModule {}

// Fastify is loaded only by the processes that use it.
const fastify = process.env.ADAPTER === 'fastify' ? await import('@nestjs/platform-fastify') : undefined;
const create = (module: object): Promise<INestApplication> =>
  fastify
    ? NestFactory.create(module, new fastify.FastifyAdapter(), { logger: new LineLogger(), abortOnError: false })
    : NestFactory.create(module, { logger: new LineLogger(), abortOnError: false });

const app = await create(AppModule);
await app.listen(0, '127.0.0.1');
// In the process where the test hides the optional transport packages: whether the hiding works.
const microservices = process.env.NODE_OPTIONS?.includes('hide-optional-packages')
  ? await import('@nestjs/microservices').then(
      () => 'loadable',
      () => 'missing',
    )
  : undefined;
await serve(app, { url: await app.getUrl(), microservices }, { 'bad-key': () => startBadApp(() => create(BadKeyModule)) });
