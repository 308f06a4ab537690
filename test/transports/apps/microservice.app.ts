/** A TCP microservice (@MessagePattern and @EventPattern), one process of the transport tests; PORT is its port. */
import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, MessagePattern, Payload, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { CurrentLock, DistributedLock, type LockHandle } from 'nestjs-distributed-lock';
import { Counter, LineLogger, lockModule, RUN, send, serve, startBadApp } from './common.js';

@Controller()
class CounterHandlers {
  constructor(private readonly counter: Counter) {}

  @MessagePattern('increment')
  @DistributedLock({ name: `${RUN}:counter`, waitTime: '10s' })
  increment(): Promise<number> {
    return this.counter.increment('locked');
  }

  @MessagePattern('increment-unlocked')
  incrementUnlocked(): Promise<number> {
    return this.counter.increment('unlocked');
  }

  @MessagePattern('busy')
  @DistributedLock({ name: `${RUN}:busy:{data.id}`, waitTime: 100 })
  busy(@Payload() _data: { id?: string }): string {
    return 'ran';
  }

  @MessagePattern('crash')
  @DistributedLock(`${RUN}:crash`)
  crash(): never {
    throw new Error('the handler crashed');
  }

  @MessagePattern('lost')
  @DistributedLock({ name: `${RUN}:lost:{data.id}`, leaseTime: '100ms', onLost: 'abort-request' })
  async lost(@Payload() _data: { id: string }, @CurrentLock() lock: LockHandle): Promise<string> {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return 'finished after its lock was lost';
  }

  @EventPattern('increment-event')
  @DistributedLock({ name: `${RUN}:event-counter`, waitTime: '10s' })
  async incrementEvent(@Payload() _data: unknown): Promise<void> {
    await this.counter.increment('event-locked');
    send({ type: 'handled', pattern: 'increment-event' });
  }

  @EventPattern('increment-event-unlocked')
  async incrementEventUnlocked(@Payload() _data: unknown): Promise<void> {
    await this.counter.increment('event-unlocked');
    send({ type: 'handled', pattern: 'increment-event-unlocked' });
  }

  @EventPattern('busy-event')
  @DistributedLock({ name: `${RUN}:busy-event:{data.id}`, waitTime: 100 })
  busyEvent(@Payload() _data: { id: string }): void {
    send({ type: 'handled', pattern: 'busy-event' });
  }
}

@Module({ imports: [lockModule()], controllers: [CounterHandlers], providers: [Counter] })
class AppModule {}

/** `{params.id}` is an HTTP root: a message never has it. */
@Controller()
class BadKeyHandlers {
  @MessagePattern('bad')
  @DistributedLock('bad:{params.id}')
  bad(): string {
    return 'never';
  }
}

@Module({ imports: [lockModule()], controllers: [BadKeyHandlers] })
class BadKeyModule {}

const create = (module: object, port: number) =>
  NestFactory.createMicroservice<MicroserviceOptions>(module, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
    logger: new LineLogger(),
    abortOnError: false,
  });

const port = Number(process.env.PORT);
const app = await create(AppModule, port);
await app.listen();
await serve(app, { port }, { 'bad-key': () => startBadApp(() => create(BadKeyModule, 0)) });
