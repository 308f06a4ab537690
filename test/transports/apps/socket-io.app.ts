/** A socket.io gateway (@SubscribeMessage) on an Express app, one process of the transport tests. */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessageBody, SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { CurrentLock, DistributedLock, type LockHandle } from 'nestjs-distributed-lock';
import { Counter, LineLogger, lockModule, RUN, serve, startBadApp } from './common.js';

@WebSocketGateway()
class CounterGateway {
  constructor(private readonly counter: Counter) {}

  @SubscribeMessage('increment')
  @DistributedLock({ name: `${RUN}:counter`, waitTime: '10s' })
  increment(): Promise<number> {
    return this.counter.increment('locked');
  }

  @SubscribeMessage('increment-unlocked')
  incrementUnlocked(): Promise<number> {
    return this.counter.increment('unlocked');
  }

  @SubscribeMessage('busy')
  @DistributedLock({ name: `${RUN}:busy:{data.id}`, waitTime: 100 })
  busy(@MessageBody() _data: { id?: string }): string {
    return 'ran';
  }

  @SubscribeMessage('crash')
  @DistributedLock(`${RUN}:crash`)
  crash(): never {
    throw new Error('the handler crashed');
  }

  @SubscribeMessage('lost')
  @DistributedLock({ name: `${RUN}:lost:{data.id}`, leaseTime: '100ms', onLost: 'abort-request' })
  async lost(@MessageBody() _data: { id: string }, @CurrentLock() lock: LockHandle): Promise<string> {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return 'finished after its lock was lost';
  }
}

@Module({ imports: [lockModule()], providers: [CounterGateway, Counter] })
class AppModule {}

/** `{query.id}` is an HTTP root: a socket message never has it. */
@WebSocketGateway()
class BadKeyGateway {
  @SubscribeMessage('bad')
  @DistributedLock('bad:{query.id}')
  bad(): string {
    return 'never';
  }
}

@Module({ imports: [lockModule()], providers: [BadKeyGateway] })
class BadKeyModule {}

const create = (module: object) => NestFactory.create(module, { logger: new LineLogger(), abortOnError: false });

const app = await create(AppModule);
await app.listen(0, '127.0.0.1');
await serve(app, { url: await app.getUrl() }, { 'bad-key': () => startBadApp(() => create(BadKeyModule)) });
