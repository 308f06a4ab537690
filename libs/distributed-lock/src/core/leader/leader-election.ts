import { EventEmitter } from 'node:events';
import { getLockContext, runInNewLockContext, runWithCurrentLock, type LockContext } from '../context/lock-context.js';
import type { LockHandle } from '../context/lock-handle.js';
import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { LockClientClosedError } from '../errors/lock-client-closed.error.js';
import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import type { BaseLock } from '../locks/base-lock.js';
import type { Clock } from '../util/clock.js';
import { describe, toMilliseconds, type Duration } from '../util/duration.js';
import { afterTimeout, settleWithin } from '../util/late-timer.js';
import { assertKnownKeys, assertLockName, isPlainObject } from '../util/validate.js';
import { Leadership, type LeadershipRevoked } from './leadership.js';

export interface LeaderElectionOptions {
  /**
   * Called when this candidate becomes leader, with the term (token, signal). What it returns (a
   * promise: the leader's work) is awaited when the term ends, before the leadership is given up or
   * sought again, so a candidate never runs two terms' work at once, and on resign the next leader
   * does not start while this one's work still runs. If it throws or rejects, the candidate steps
   * down (and stands again after `standAgainAfter`).
   */
  onElected?: (leadership: Leadership) => unknown;
  /** Called when a term ends (lost, resigned, stepped down), before the work is awaited; may return a promise (awaited too). */
  onRevoked?: (revoked: LeadershipRevoked) => unknown;
  /**
   * The leadership lasts as long as onElected's work: when its promise settles, this candidate steps
   * down (the next one takes over at once) and stands again after `standAgainAfter` (Curator's
   * LeaderSelector). Default false: it leads until it resigns or loses the lease (Curator's LeaderLatch).
   */
  stepDownWhenDone?: boolean;
  /** After stepping down (or a failed onElected), how long to wait before standing again. Default 1 s. */
  standAgainAfter?: Duration;
}

const OPTION_KEYS = ['onElected', 'onRevoked', 'stepDownWhenDone', 'standAgainAfter'] as const;

/** `elect(name, options)`, checked and started: the candidate campaigns for the plain lock `leader:<name>`. */
export function createElection(
  getLock: (name: string) => BaseLock,
  name: string,
  options: LeaderElectionOptions,
  report: (error: unknown) => void,
  clock: Clock,
): LeaderElection {
  assertLockName(name, 'election name');
  if (!isPlainObject(options)) throw new InvalidLockArgumentError('election options', `expected an options object, got ${describe(options)}.`);
  assertKnownKeys(options, OPTION_KEYS, 'election options');
  for (const callback of ['onElected', 'onRevoked'] as const) {
    if (options[callback] !== undefined && typeof options[callback] !== 'function') {
      throw new InvalidLockArgumentError(callback, `expected a function, got ${describe(options[callback])}.`);
    }
  }
  if (options.stepDownWhenDone !== undefined && typeof options.stepDownWhenDone !== 'boolean') {
    throw new InvalidLockArgumentError('stepDownWhenDone', `expected true or false, got ${describe(options.stepDownWhenDone)}.`);
  }
  return new LeaderElection(name, getLock(`leader:${name}`), options, report, clock).start();
}

/** Longest a resigning leader's work is awaited by default before the leadership is released anyway. */
export const DEFAULT_RESIGN_TIMEOUT_MS = 10_000;
const DEFAULT_STAND_AGAIN_MS = 1_000;
/** Pauses before standing again after the campaign itself failed (Redis unreachable): 0.1 s up to 2 s. */
const CAMPAIGN_BACKOFF_MS = [100, 200, 500, 1000, 2000];

interface Term {
  readonly leadership: Leadership;
  end(reason: LockLostReason): void;
}

export interface LeaderElectionEvents {
  elected: [Leadership];
  revoked: [LeadershipRevoked];
}

/**
 * A candidate in a leader election: one leader at a time among every candidate of `name`, in every
 * process. The leadership is a plain lock (`leader:<name>`) held with a watchdog-renewed lease
 * (the client's watchdogTimeout): the candidates wait for it as any caller waits for a lock (pub/sub,
 * no polling, processes in turn), so it goes to a waiting candidate at once when the leader resigns
 * or closes, and within the lease when the leader dies or pauses. Its fencing token is the term.
 *
 * A leader that loses its lease is told before it acts again (the signal, `isLeader`,
 * `throwIfLost()`), and stands again once its work has ended. Works in every mode, redlock
 * included (a plain lock). Created and started by `LockClient.elect`.
 */
export class LeaderElection extends EventEmitter<LeaderElectionEvents> {
  private current: Term | undefined;
  private closed = false;
  /** Aborts the wait for the leadership, and pauses between campaigns, when the candidate resigns. */
  private readonly stopping = new AbortController();
  private campaign: Promise<void> = Promise.resolve();
  private resignTimeoutMs = DEFAULT_RESIGN_TIMEOUT_MS;
  private readonly standAgainMs: number;

  constructor(
    readonly name: string,
    private readonly lock: BaseLock,
    private readonly options: LeaderElectionOptions,
    /** Where failures go (the client's `background-error` events, operation `elect`). */
    private readonly report: (error: unknown) => void,
    private readonly clock: Clock,
  ) {
    super();
    this.standAgainMs = options.standAgainAfter === undefined ? DEFAULT_STAND_AGAIN_MS : toMilliseconds(options.standAgainAfter, 'standAgainAfter', { min: 0 });
  }

  /** @internal Starts campaigning (once): LockClient.elect calls it. */
  start(): this {
    if (!this.closed) this.campaign = this.run();
    return this;
  }

  /** The current term, if this candidate leads right now (lease checked as read). */
  get leadership(): Leadership | undefined {
    const leadership = this.current?.leadership;
    return leadership?.isLeader ? leadership : undefined;
  }

  /** Whether this candidate leads right now (lease checked as read), as Leadership.isLeader. */
  get isLeader(): boolean {
    return this.leadership !== undefined;
  }

  /** The current term (the leadership's fencing token) while this candidate leads. */
  get term(): number | undefined {
    return this.leadership?.term;
  }

  /** Whether the candidate still stands (false once it resigned or its client closed). */
  get standing(): boolean {
    return !this.closed;
  }

  /**
   * Stops standing. If it leads: the term's signal aborts (reason `resigned`), onRevoked and the
   * work are awaited (up to `timeout`, default 10 s), then the leadership is released and goes to a
   * waiting candidate at once. Idempotent; resolves when the candidate is out.
   */
  async resign(timeout?: Duration): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      if (timeout !== undefined) this.resignTimeoutMs = toMilliseconds(timeout, 'resign timeout', { min: 0 });
      this.stopping.abort();
      this.current?.end('resigned');
    }
    await this.campaign;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      let context!: LockContext;
      let handle: LockHandle;
      try {
        // A lock context of its own per term: two candidates in one process are two owners.
        handle = await runInNewLockContext(() => {
          context = getLockContext()!;
          return this.lock.lock({ signal: this.stopping.signal });
        });
        failures = 0;
      } catch (error) {
        if (this.closed || error instanceof LockClientClosedError) break;
        this.report(error);
        await this.pause(CAMPAIGN_BACKOFF_MS[Math.min(failures++, CAMPAIGN_BACKOFF_MS.length - 1)]!);
        continue;
      }
      if (this.closed) {
        await handle.unlock().catch((error: unknown) => this.report(error));
        break;
      }
      const steppedDown = await this.lead(handle, context);
      if (steppedDown) await this.pause(this.standAgainMs);
    }
    this.closed = true;
  }

  /**
   * One term, from election to release. Returns true when the candidate stepped down (its work ended
   * or failed) rather than losing the lease or resigning.
   */
  private async lead(handle: LockHandle, context: LockContext): Promise<boolean> {
    const controller = new AbortController();
    const leadership = new Leadership(this.name, handle, controller.signal);
    const end = (reason: LockLostReason): void => {
      if (!controller.signal.aborted) controller.abort(new LockLostError(this.lock.name, reason));
    };
    const ended = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }));
    // The lease lost (renewal refused, deadline passed, read-time check): the term ends at once.
    const lockSignal = handle.signal;
    const onLost = (): void => {
      if (!controller.signal.aborted) controller.abort(lockSignal.reason);
    };
    lockSignal.addEventListener('abort', onLost, { once: true });
    if (lockSignal.aborted) onLost();
    this.current = { leadership, end };
    let steppedDown = false;
    let work: Promise<unknown>;
    try {
      this.emit('elected', leadership);
      work = Promise.resolve(runWithCurrentLock(context, handle, () => this.options.onElected?.(leadership)));
    } catch (error) {
      work = Promise.reject(error);
    }
    const workEnded = work.then(
      () => {
        if (this.options.stepDownWhenDone && !controller.signal.aborted) {
          steppedDown = true;
          end('resigned');
        }
      },
      (error: unknown) => {
        if (controller.signal.aborted) return; // it stopped because the term ended: expected
        this.report(error);
        steppedDown = true;
        end('resigned');
      },
    );
    await ended;
    lockSignal.removeEventListener('abort', onLost);
    const reason = controller.signal.reason instanceof LockLostError ? controller.signal.reason.reason : 'lease-expired';
    const revoked: LeadershipRevoked = { name: this.name, term: handle.token, reason };
    this.emit('revoked', revoked);
    // Tell, and let the work end, before the leadership goes: the next leader must not start while
    // this one's work still runs (when the lease was lost, it may have already; fencing covers that).
    await this.stopped(
      Promise.all([
        workEnded,
        Promise.resolve()
          .then(() => this.options.onRevoked?.(revoked))
          .catch((error: unknown) => this.report(error)),
      ]),
    );
    this.current = undefined;
    await handle.releaseUnlessOver().catch((error: unknown) => this.report(error));
    return steppedDown;
  }

  /**
   * Waits for a term's work (and onRevoked) to end: as long as it takes while the candidate stands,
   * and from the moment it resigns, at most the resign timeout (then the leadership goes anyway).
   */
  private async stopped(work: Promise<unknown>): Promise<void> {
    let ended = false;
    const tracked = work.then(() => void (ended = true));
    if (!this.closed) {
      const { signal } = this.stopping;
      let onResign!: () => void;
      await Promise.race([tracked, new Promise<void>((resolve) => signal.addEventListener('abort', (onResign = () => resolve()), { once: true }))]);
      signal.removeEventListener('abort', onResign);
    }
    if (ended) return;
    if (!Number.isFinite(this.resignTimeoutMs)) return tracked;
    await settleWithin(this.clock, tracked, this.resignTimeoutMs, () =>
      this.report(new Error(`the work of leader "${this.name}" did not end within ${this.resignTimeoutMs} ms of resigning; the leadership is released anyway`)),
    );
  }

  /** Waits `ms`, or less if the candidate resigns meanwhile. */
  private pause(ms: number): Promise<void> {
    if (this.closed || ms <= 0) return Promise.resolve();
    const { signal } = this.stopping;
    return new Promise((resolve) => {
      const done = (): void => {
        cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const cancel = afterTimeout(this.clock, ms, done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
