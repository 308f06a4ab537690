import { Injectable, Logger } from '@nestjs/common';
import { LockBackendError, type LockHandle } from '../core/index.js';
import { afterTimeout, settleWithin } from '../core/internal.js';
import type { DistributedLockMetadata } from './distributed-lock.options.js';
import { LockedCall, type LockedCallPorts } from './locked-call.js';
import { loadLockTracing } from './lock-tracing.js';
import { LockService } from './lock.service.js';
import type { LockedMethodRunner, RequestCall } from './locked-method.js';

/**
 * Runs the decorated calls of one application, each as a LockedCall (locked-call.ts: its names, its
 * lock, its release), and keeps what shutdown needs: the calls in flight, and the locks kept for
 * lockAtLeastFor (released later by an unref'd timer, at once on shutdown).
 */
@Injectable()
export class DistributedLockRunner implements LockedMethodRunner {
  private readonly logger = new Logger('DistributedLock');
  /** Calls in flight: each settles once its lock is released (or was never taken). */
  private readonly inFlight = new Set<Promise<void>>();
  /** Releases deferred by lockAtLeastFor: handle -> cancels its timer. */
  private readonly deferred = new Map<LockHandle, () => void>();
  private shuttingDown = false;
  private readonly ports: { -readonly [K in keyof LockedCallPorts]: LockedCallPorts[K] };

  constructor(locks: LockService) {
    this.ports = { locks, logger: this.logger, tracing: undefined, release: (handle, metadata, acquiredAt) => this.release(handle, metadata, acquiredAt) };
  }

  /** Loads the optional OpenTelemetry API (no spans when it is not installed). Called by DistributedLockModule at start-up. */
  async init(): Promise<void> {
    this.ports.tracing = await loadLockTracing(this.ports.locks.clock);
  }

  /** One decorated call (used by the method wrapper, locked-method.ts): takes the lock, runs `invoke`, releases. */
  run(metadata: DistributedLockMetadata, args: unknown[], invoke: (lock: LockHandle) => unknown, request: RequestCall | undefined): Promise<unknown> {
    const call = new LockedCall(this.ports, metadata, args, invoke, request);
    this.inFlight.add(call.ended);
    void call.ended.then(() => this.inFlight.delete(call.ended));
    return call.run();
  }

  /**
   * Shutdown, first step (DistributedLockModule.beforeApplicationShutdown): releases the locks kept
   * for lockAtLeastFor, and waits for decorated calls in flight to finish (their locks are released
   * as they end), both up to `timeoutMs`. True if no call was left. What is still unreleased then is
   * released by the client's close().
   */
  async drain(timeoutMs: number): Promise<boolean> {
    this.shuttingDown = true;
    const deferred = [...this.deferred.entries()];
    this.deferred.clear();
    const released = Promise.all(
      deferred.map(([handle, cancel]) => {
        cancel();
        return this.unlockQuietly(handle);
      }),
    );
    const idle = (async () => {
      while (this.inFlight.size > 0) await Promise.all(this.inFlight); // calls may still start meanwhile
    })();
    const finished = await settleWithin(
      this.ports.locks.clock,
      Promise.all([idle, released]).then(() => true),
      timeoutMs,
      () => false,
    );
    if (!finished && this.inFlight.size > 0) {
      this.logger.warn(
        `${this.inFlight.size} locked call(s) still running after the shutdown timeout (${timeoutMs} ms); their locks are released now and their lost-lease signals abort.`,
      );
    }
    return this.inFlight.size === 0;
  }

  /**
   * Releases a call's lock, or, with lockAtLeastFor, keeps it until that long after it was acquired
   * (an unref'd timer; shutdown releases such locks at once). Failures are logged, never thrown: the
   * call's own outcome stands, and the lock's lease bounds the damage.
   */
  private async release(handle: LockHandle, metadata: DistributedLockMetadata, acquiredAt: number): Promise<void> {
    if (!handle.isHeld) return; // lost, or released by shutdown
    const keepFor = metadata.lockAtLeastMs === undefined ? 0 : metadata.lockAtLeastMs - (this.ports.locks.clock.now() - acquiredAt);
    if (keepFor > 0 && !this.shuttingDown) {
      const cancel = afterTimeout(this.ports.locks.clock, keepFor, () => {
        this.deferred.delete(handle);
        void this.unlockQuietly(handle);
      });
      this.deferred.set(handle, cancel);
      return;
    }
    await this.unlockQuietly(handle);
  }

  private async unlockQuietly(handle: LockHandle): Promise<void> {
    if (!handle.isHeld) return;
    try {
      await handle.unlock();
    } catch (error) {
      if (error instanceof LockBackendError) this.ports.locks.outage.failed('release after a locked call', error, handle.name);
      else this.logger.warn(`Releasing lock "${handle.name}" after a locked call failed: ${(error as Error).message}`);
    }
  }
}
