/** A GraphQL app (Apollo, code-first), one process of the transport tests. */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, Field, GraphQLModule, Int, Mutation, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { CurrentLock, DistributedLock, type LockHandle } from 'nestjs-distributed-lock';
import { Counter, LineLogger, lockModule, RUN, serve, startBadApp } from './common.js';

@ObjectType()
class Increment {
  @Field(() => Int)
  value!: number;

  /** The fencing token as a String: tokens pass 2^31 (GraphQL's Int) at once. */
  @Field(() => String)
  token!: string;
}

@Resolver()
class CounterResolver {
  constructor(private readonly counter: Counter) {}

  @Query(() => String)
  hello(): string {
    return 'hello';
  }

  @Mutation(() => Increment)
  @DistributedLock({ name: `${RUN}:counter`, waitTime: '10s' })
  async increment(@CurrentLock() lock: LockHandle): Promise<Increment> {
    return { value: await this.counter.increment('locked'), token: String(lock.token) };
  }

  @Mutation(() => Int)
  incrementUnlocked(): Promise<number> {
    return this.counter.increment('unlocked');
  }

  @Mutation(() => String)
  @DistributedLock({ name: `${RUN}:busy:{data.id}`, waitTime: 100 })
  busy(@Args('id', { type: () => String, nullable: true }) _id?: string): string {
    return 'ran';
  }

  @Mutation(() => String)
  @DistributedLock(`${RUN}:crash`)
  crash(): string {
    throw new Error('the handler crashed');
  }

  @Mutation(() => String)
  @DistributedLock({ name: `${RUN}:lost:{data.id}`, leaseTime: '100ms', onLost: 'abort-request' })
  async lost(@Args('id', { type: () => String }) _id: string, @CurrentLock() lock: LockHandle): Promise<string> {
    await new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    return 'finished after its lock was lost';
  }

  /** The control of `Increment.token`: the token as an Int, which GraphQL refuses. */
  @Mutation(() => Int)
  @DistributedLock(`${RUN}:token-as-int`)
  tokenAsInt(@CurrentLock() lock: LockHandle): number {
    return lock.token;
  }
}

const graphql = () => GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, includeStacktraceInErrorResponses: false });

@Module({ imports: [lockModule(), graphql()], providers: [CounterResolver, Counter] })
class AppModule {}

/** `{body.id}` is an HTTP root: a resolver reads its field's arguments as `data`. */
@Resolver()
class BadKeyResolver {
  @Query(() => String)
  @DistributedLock('bad:{body.id}')
  bad(): string {
    return 'never';
  }
}

@Module({ imports: [lockModule(), graphql()], providers: [BadKeyResolver] })
class BadKeyModule {}

const create = (module: object) => NestFactory.create(module, { logger: new LineLogger(), abortOnError: false });

const app = await create(AppModule);
await app.listen(0, '127.0.0.1');
await serve(app, { url: await app.getUrl() }, { 'bad-key': () => startBadApp(() => create(BadKeyModule)) });
