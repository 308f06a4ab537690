import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { settleWithin } from '../core/internal.js';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { LeaderElection, Leadership } from '../core/index.js';
import { LEADER_METADATA, type LeaderMetadata } from './leader.decorator.js';
import { LockService } from './lock.service.js';

/**
 * Starts an election for every @Leader method of every provider once the application has started
 * (onApplicationBootstrap: every module is initialised, so the method's dependencies are ready), and
 * resigns them on shutdown (beforeApplicationShutdown, while the lock client is still open): each
 * leader's signal aborts, its method is awaited up to shutdownTimeout, and the leadership goes to a
 * waiting instance at once.
 */
@Injectable()
export class LeaderExplorer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DistributedLock');
  private readonly elections: LeaderElection[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly locks: LockService,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
      if (!prototype || prototype === Object.prototype) continue;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const metadata = Reflect.getMetadata(LEADER_METADATA, prototype[method] as object) as LeaderMetadata | undefined;
        if (!metadata) continue;
        if (!wrapper.isDependencyTreeStatic()) {
          this.logger.warn(`${metadata.where} has @Leader, but ${wrapper.name} is request-scoped (or depends on one): it does not stand for election.`);
          continue;
        }
        const run = (prototype[method] as (leadership: Leadership) => unknown).bind(instance);
        this.elections.push(this.stand(metadata, run));
      }
    }
  }

  /** Resigns every election: leaders stop (up to shutdownTimeout) and hand over at once. */
  async beforeApplicationShutdown(): Promise<void> {
    // Within shutdownTimeout in all (shared with the decorated calls' drain, which follows): a
    // leadership whose release Redis has not answered by then is released by the client's close().
    const timeoutMs = this.locks.shutdownTimeLeft();
    await settleWithin(this.locks.clock, Promise.all(this.elections.splice(0).map((election) => election.resign(timeoutMs))), timeoutMs, () => undefined);
  }

  private stand(metadata: LeaderMetadata, run: (leadership: Leadership) => unknown): LeaderElection {
    const election = this.locks.elect(metadata.name, {
      onElected: run,
      stepDownWhenDone: true,
      ...(metadata.standAgainAfterMs === undefined ? {} : { standAgainAfter: metadata.standAgainAfterMs }),
    });
    election.on('elected', ({ term }) => this.logger.log(`Leader of "${metadata.name}" (term ${term}): ${metadata.where} runs here.`));
    election.on('revoked', ({ term, reason }) => {
      const message = `No longer leader of "${metadata.name}" (term ${term}, ${reason}).`;
      if (reason === 'resigned' || reason === 'client-closed') this.logger.log(message);
      else this.logger.warn(`${message} Another instance may lead already; ${metadata.where} must stop (its signal aborted).`);
    });
    return election;
  }
}
