import type { LockHandle } from '../../distributed-lock/src/core/context/lock-handle.js';
import { DistributedLockError } from '../../distributed-lock/src/core/errors/distributed-lock.error.js';
import type { MultiLockHandle } from '../../distributed-lock/src/core/locks/multi/multi-lock.js';
import type { PermitsHandle } from '../../distributed-lock/src/core/locks/semaphore/permits-handle.js';
import { Hold, type Family, type Sharing } from './holds.js';
import type { Prng } from './prng.js';
import type { OperationMix } from './sim-config.js';
import type { SimProcess } from './sim-process.js';

/** What a caller may meet without anything being wrong: the typed errors of a wait, a fault, a loss. */
const EXPECTED = new Set([
  'LOCK_ACQUIRE_TIMEOUT',
  'LOCK_ACQUIRE_ABORTED',
  'LOCK_BACKEND_ERROR',
  'LOCK_QUORUM_FAILED',
  'LOCK_CIRCUIT_OPEN',
  'LOCK_CLIENT_CLOSED',
  'LOCK_NOT_HELD',
  'LOCK_LOST',
]);

type Operation = keyof OperationMix;
const OPERATIONS = ['plain', 'reentrant', 'withLock', 'abort', 'fair', 'read', 'write', 'multi', 'semaphore', 'forever', 'leader'] as const;

/**
 * One simulated caller: it loops over operations drawn from the run's mix, each as a new owner (a new
 * lock context), each a critical section on the protected resource under the lock it got, checked by
 * the invariants at every access, and records every call and its answer.
 */
export class Actor {
  constructor(
    private readonly process: SimProcess,
    private readonly id: string,
    private readonly prng: Prng,
  ) {}

  private get world() {
    return this.process.world;
  }

  private get client() {
    return this.process.client;
  }

  /** In the calm, every wait must end with the lock (see runCalm). */
  private calm = false;

  /**
   * Its operations from the start, through the faults; then, once the calm has come, a few more, each
   * willing to wait long: in the calm none may fail (a timeout or a backend error there is `starved`).
   */
  async run(): Promise<void> {
    const { config } = this.world;
    for (let i = 0; i < config.operationsPerCaller && this.atWork; i++) {
      await this.operate(this.pick(false));
      await this.sleep(this.prng.between(config.thinkMs[0], config.thinkMs[1]));
    }
    const untilCalm = config.calmAt - this.world.scheduler.now;
    if (untilCalm > 0) await this.sleep(untilCalm / this.process.clock.rate);
    this.calm = true;
    for (let i = 0; i < config.calmOperations && this.atWork; i++) {
      await this.operate(this.pick(true));
      await this.sleep(this.prng.between(config.thinkMs[0], config.thinkMs[1]));
    }
  }

  /** Its process neither died nor closed its client. */
  private get atWork(): boolean {
    return !this.process.dead && !this.process.closed;
  }

  private async operate(operation: Operation): Promise<void> {
    try {
      await this.client.runInNewContext(() => this.perform(operation));
    } catch (error) {
      this.failed(operation, error);
    }
  }

  /** An operation of the run's mix (in the calm, never an abort: its wait is cut short on purpose). */
  private pick(calm: boolean): Operation {
    const { mix } = this.world.config;
    const chosen = calm ? OPERATIONS.filter((operation) => operation !== 'abort') : OPERATIONS;
    const total = chosen.reduce((sum, operation) => sum + mix[operation], 0);
    if (total === 0) return 'plain';
    let draw = this.prng.float() * total;
    for (const operation of chosen) {
      draw -= mix[operation];
      if (draw < 0) return operation;
    }
    return 'plain';
  }

  private async perform(operation: Operation): Promise<void> {
    const { config } = this.world;
    const name = this.prng.pick(config.names);
    const waitMs = this.calm ? config.calmWaitMs : this.prng.between(config.waitMs[0], config.waitMs[1]);
    const leaseMs = this.prng.chance(0.5) ? this.prng.between(config.leaseMs[0], config.leaseMs[1]) : undefined;
    const options = { waitTime: waitMs, ...(leaseMs === undefined ? {} : { leaseTime: leaseMs }) };
    const client = this.client;
    switch (operation) {
      case 'plain':
        return this.locked('plain', name, waitMs, () => client.tryLock(name, options));
      case 'forever':
        return this.locked('plain', name, Infinity, () => client.lock(name, leaseMs === undefined ? {} : { leaseTime: leaseMs }));
      case 'fair':
        return this.locked('fair', 'f', waitMs, () => client.getFairLock('f', { queueTimeout: config.fairQueueTimeoutMs }).tryLock(options));
      case 'write':
        return this.locked('rw', 'rw', waitMs, () => client.getReadWriteLock('rw').writeLock().tryLock(options));
      case 'read':
        return this.locked('rw', 'rw', waitMs, () => client.getReadWriteLock('rw').readLock().tryLock(options), { mode: 'read' });
      case 'abort': {
        const controller = new AbortController();
        this.process.clock.setTimer(this.prng.between(0, waitMs), () => controller.abort());
        return this.locked('plain', name, waitMs, () => client.lock(name, { ...options, signal: controller.signal }));
      }
      case 'withLock':
        return this.withLock(name, waitMs, options);
      case 'reentrant':
        return this.reentrant(name, waitMs, options);
      case 'multi':
        return this.multi(waitMs, options);
      case 'leader':
        return this.leader(waitMs);
      case 'semaphore': {
        const size = config.semaphoreSize;
        const permits = this.prng.int(1, size);
        const sharing: Sharing = { mode: 'permits', permits, size };
        return this.locked('semaphore', 's', waitMs, () => client.getSemaphore('s', { size }).tryAcquire(permits, options), sharing);
      }
    }
  }

  /** Acquires with `acquire`, works under the lock, releases: each step recorded and checked. */
  private async locked(
    family: Family,
    name: string,
    waitMs: number,
    acquire: () => Promise<LockHandle | PermitsHandle | false>,
    sharing: Sharing = { mode: 'exclusive' },
  ): Promise<void> {
    const handle = await this.call(`${family} ${name}`, waitMs, acquire);
    if (!handle) return;
    const hold = this.holdOf(family, name, handle, sharing, handle.token);
    await this.work(handle, [hold]);
    await this.release(handle, [hold]);
  }

  /** withLock: its wait is judged up to the moment the function runs (then the section, then the release). */
  private async withLock(name: string, waitMs: number, options: { waitTime: number; leaseTime?: number }): Promise<void> {
    let hold: Hold | undefined;
    const waiting = this.world.calls.begin(this.process, `withLock ${name}`, waitMs);
    let answered = false;
    const done = await this.call(`withLock ${name} (all)`, Infinity, () =>
      this.client.withLock(
        name,
        async (handle) => {
          answered = true;
          this.world.calls.end(waiting, 'ok');
          hold = this.holdOf('plain', name, handle, { mode: 'exclusive' }, handle.token);
          await this.work(handle, [hold]);
          this.world.invariants.ended(hold);
          return true;
        },
        options,
      ),
    );
    if (!answered) this.world.calls.end(waiting, done === undefined ? 'error' : 'false');
    if (hold) this.world.callEnded(hold);
    // Not held-after-unlock: withLock swallows a failed release (and skips one of a lock lost), so its
    // answer does not say the lock was given back.
  }

  private async reentrant(name: string, waitMs: number, options: { waitTime: number; leaseTime?: number }): Promise<void> {
    const outer = await this.call(`plain ${name}`, waitMs, () => this.client.tryLock(name, options));
    if (!outer) return;
    const outerHold = this.holdOf('plain', name, outer, { mode: 'exclusive' }, outer.token);
    const inner = await this.call(`re-enter ${name}`, 0, () => this.client.tryLock(name));
    if (inner) {
      const innerHold = this.holdOf('plain', name, inner, { mode: 'exclusive' }, inner.token);
      await this.work(inner, [innerHold]);
      await this.release(inner, [innerHold], false);
    }
    await this.work(outer, [outerHold]);
    await this.release(outer, [outerHold]);
  }

  private async multi(waitMs: number, options: { waitTime: number; leaseTime?: number }): Promise<void> {
    const names = [...this.world.config.names, 'm'];
    const first = this.prng.int(0, names.length - 1);
    const pair = [names[first]!, names[(first + 1 + this.prng.int(0, names.length - 2)) % names.length]!];
    const handle = (await this.call(`multi ${pair.join('+')}`, waitMs, () => this.client.getMultiLock(pair).tryLock(options))) as MultiLockHandle | false;
    if (!handle) return;
    const holds = handle.handles.map((part) => this.holdOf('plain', part.name, part, { mode: 'exclusive' }, part.token));
    await this.work(handle, holds);
    await this.release(handle, holds);
  }

  /**
   * A candidate of the election 'e': elected, it leads for one section and steps down; not elected
   * within its wait, it resigns (its campaign is the call, answered 'false' then). In the calm every
   * candidate must be elected within the calm's wait: the terms are one section long.
   */
  private async leader(waitMs: number): Promise<void> {
    const campaign = this.world.calls.begin(this.process, 'leader e', waitMs);
    let answered = false;
    let termEnded: () => void = () => undefined;
    const terms: Hold[] = [];
    const served = new Promise<void>((resolve) => (termEnded = resolve));
    const election = this.client.elect('e', {
      stepDownWhenDone: true,
      onElected: async (leadership) => {
        if (!answered) {
          answered = true;
          this.world.calls.end(campaign, 'ok');
          this.world.log.line(this.id, 'leader e -> ok');
        }
        const hold = this.holdOf('plain', 'leader:e', leadership, { mode: 'exclusive' }, leadership.term);
        terms.push(hold);
        await this.work(
          {
            get isHeld() {
              return leadership.isLeader;
            },
          } as LockHandle,
          [hold],
        );
        this.world.invariants.ended(hold);
        termEnded();
      },
    });
    await Promise.race([served, this.sleep(waitMs)]);
    if (!answered) {
      answered = true;
      this.world.calls.end(campaign, 'false');
      this.world.log.line(this.id, 'leader e -> false');
      this.starvedIfCalm('leader e', 'false');
    }
    await this.call('resign e', Infinity, () => election.resign().then(() => true));
    for (const term of terms) this.world.callEnded(term);
  }

  private holdOf(family: Family, name: string, handle: object, sharing: Sharing, token: number): Hold {
    const hold = new Hold(this.process, family, name, sharing, token, handle, this.world.scheduler.now);
    this.world.log.line(this.id, `holds ${family}:${name} as ${hold.owner} token ${token}`);
    this.world.invariants.acquired(hold);
    return hold;
  }

  /** The critical section: read the resource, take some time, write it back (an increment), each under a check of the lease. */
  private async work(handle: LockHandle, holds: Hold[]): Promise<void> {
    const { invariants } = this.world;
    const fenced = (hold: Hold): boolean => hold.sharing.mode === 'exclusive';
    if (!this.stillHeld(handle)) return;
    const read = holds.map((hold) => invariants.access(hold, fenced(hold)));
    await this.sleep(this.prng.between(this.world.config.sectionMs[0], this.world.config.sectionMs[1]));
    if (!this.stillHeld(handle)) return;
    holds.forEach((hold, i) => {
      const value = read[i];
      if (value === undefined || hold.sharing.mode !== 'exclusive') invariants.access(hold, fenced(hold));
      else invariants.access(hold, true, { expected: value, value: value + 1 });
    });
  }

  /** Unlocks: from the call on, the caller no longer works under the lock (its holds end then). */
  /**
   * Whether the holder may go on. (False is not yet a loss: past its deadline with a renewal in flight,
   * a lease is not known to be held, nor known to be lost; the renewal's answer decides. See release.)
   */
  private stillHeld(handle: LockHandle): boolean {
    return handle.isHeld;
  }

  private async release(handle: LockHandle, holds: Hold[], last = true): Promise<void> {
    for (const hold of holds) this.world.invariants.ended(hold);
    const startedAt = this.world.scheduler.now;
    const released = await this.call(`unlock ${holds.map((hold) => hold.cell).join('+')}`, Infinity, async () => {
      try {
        await handle.unlock();
      } catch (error) {
        // Not held at its own unlock: the library knew it lost the lock, so it must have said so.
        if (error instanceof DistributedLockError && error.code === 'LOCK_NOT_HELD' && !handle.signal.aborted) {
          const what = holds.map((hold) => hold.describe()).join(' + ');
          this.world.invariants.violate('untold-loss', `${this.id}'s unlock of ${what} found it not held (${error.message}), and its signal never aborted`);
        }
        throw error;
      }
      return true;
    });
    if (released && last) for (const hold of holds) this.world.releasedLast(hold, startedAt);
  }

  /** One library call: recorded with its answer; an expected error comes back as undefined. */
  private async call<T>(what: string, waitMs: number, run: () => Promise<T>): Promise<T | undefined> {
    const call = this.world.calls.begin(this.process, what, waitMs);
    try {
      const result = await run();
      this.world.calls.end(call, result === false ? 'false' : 'ok');
      this.world.log.line(this.id, `${what} -> ${result === false ? 'false' : 'ok'}`);
      if (result === false) this.starvedIfCalm(what, 'false');
      return result;
    } catch (error) {
      const code = error instanceof DistributedLockError ? error.code : String(error);
      this.world.calls.end(call, code);
      this.world.log.line(this.id, `${what} -> ${code}`);
      if (!(error instanceof DistributedLockError) || !EXPECTED.has(error.code)) throw error;
      this.starvedIfCalm(what, code);
      return undefined;
    }
  }

  /**
   * In the calm, with no fault left and a long wait, an acquisition that does not get its lock is
   * starved; any call that meets a backend error (Redis answers, and the network is healthy) too. An
   * unlock may find its lease over (a section longer than an explicit lease): that is not starving.
   */
  private starvedIfCalm(what: string, outcome: string): void {
    if (!this.calm || what.startsWith('re-enter') || this.process.closed) return;
    if (what.startsWith('unlock') && outcome !== 'LOCK_BACKEND_ERROR') return;
    this.world.invariants.violate(
      'starved',
      `${this.id}'s ${what} in the calm (waitTime ${this.world.config.calmWaitMs} ms, no fault left) answered ${outcome}`,
    );
  }

  private failed(operation: Operation, error: unknown): void {
    if (error instanceof DistributedLockError && EXPECTED.has(error.code)) return;
    const text = error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
    this.world.invariants.violate('unexpected-error', `${this.id} in ${operation}: ${text}`);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.process.clock.setTimer(ms, resolve));
  }
}
