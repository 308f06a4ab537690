import type { ReplicaAck } from '../../config/replica-ack.js';
import type { RenewResult } from '../../engine/lease-resource.js';
import type { LockInspection } from '../../inspection/lock-inspection.js';
import { UnsupportedLockOperationError } from '../../errors/unsupported-lock-operation.error.js';
import type { LockScript, ReleaseReply } from '../../scripts/lock-script.js';
import { BaseLock } from '../base-lock.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { confirmGrant, confirmRenewal } from '../replica-confirmation.js';
import type { WriteAttemptReply } from './read-write.lua.js';
import { readAcquire, type ReadWriteAcquireArgs } from './read-acquire.script.js';
import { readWriteAdjust, readWriteForceUnlock, readWriteState, type ReadWriteState } from './read-write-admin.script.js';
import { readRelease, writeRelease, type ReadWriteReleaseArgs } from './read-write-release.script.js';
import { readRenew, writeRenew, type ReadWriteRenewArgs } from './read-write-renew.script.js';
import { writeAcquire } from './write-acquire.script.js';
import type { AttemptArgs, AttemptResult } from '../lock-kind.js';
import { readersKey } from './read-write-keys.js';
import { READ_WRITE_KIND } from './read-write.kind.js';

/** The scripts one half of the lock runs: its own acquire, renew and release. */
interface HalfScripts {
  acquire: LockScript<ReadWriteAcquireArgs, WriteAttemptReply, [number, number]>;
  renew: LockScript<ReadWriteRenewArgs, boolean, number>;
  release: LockScript<ReadWriteReleaseArgs, ReleaseReply, number>;
}

/**
 * One half of a read-write lock. Both halves share the lock's hash, reader set, fencing counter and
 * channel; each is a resource of its own for the watchdog and the registry (kind 'read' / 'write').
 */
abstract class ReadWriteHalf extends BaseLock {
  abstract override readonly kind: 'read' | 'write';
  /** @internal */
  protected abstract readonly scripts: HalfScripts;
  /** The sorted set of live readers (the lock's hash is `id`). */
  protected readonly readersKey: string;

  /** @internal */
  constructor(runtime: LockRuntime, name: string) {
    super(runtime, name, READ_WRITE_KIND);
    this.readersKey = readersKey(runtime.keys, name);
  }

  /** @internal See LockKindContract. */
  async attempt({ owner, leaseMs, watchdog, replicaAck }: AttemptArgs): Promise<AttemptResult> {
    const reply = await this.runtime.nodes[0]!.run(this.scripts.acquire, {
      hash: this.id,
      readers: this.readersKey,
      fence: this.fenceKey,
      owner,
      leaseMs,
      watchdog,
    });
    if ('upgradeRefused' in reply) {
      throw new UnsupportedLockOperationError(
        this.name,
        'take the write lock while holding the read lock',
        'upgrading is refused because two readers upgrading at once would wait for each other forever. Release the read lock first, or take the write lock from the start (the writer may also read: downgrade is allowed).',
      );
    }
    if (reply.acquired && replicaAck) {
      await confirmGrant(this.runtime, this, replicaAck, () => this.release(owner, false));
    }
    return reply;
  }

  /** @internal See LeaseResource. */
  async renew(owner: string, leaseMs: number, replicaAck: ReplicaAck | undefined): Promise<RenewResult> {
    const renewed = await this.runtime.nodes[0]!.run(this.scripts.renew, { hash: this.id, readers: this.readersKey, owner, leaseMs });
    return confirmRenewal(this.runtime, this, renewed, leaseMs, replicaAck);
  }

  /** @internal See LeaseResource. */
  release(owner: string, all: boolean, expectedHolds?: number, token?: number): Promise<ReleaseReply> {
    return this.runtime.nodes[0]!.run(this.scripts.release, {
      hash: this.id,
      readers: this.readersKey,
      channel: this.channel,
      owner,
      publish: this.runtime.publishCommand(),
      all,
      expectedHolds,
      token,
    });
  }

  /** @internal See LockKindContract. */
  async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.runtime.nodes[0]!.run(readWriteAdjust, { hash: this.id, readers: this.readersKey, owner, side: this.kind, holds });
  }

  /** @internal The writer's holds, the live readers, the ms until everything expires, and `owner`'s holds of each side. */
  protected state(owner = ''): Promise<ReadWriteState> {
    return this.runtime.query('state', this.name, () => this.runtime.nodes[0]!.run(readWriteState, { hash: this.id, readers: this.readersKey, owner }));
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerByName();
    if (!owner) return 0;
    const state = await this.state(owner);
    return this.kind === 'read' ? state.ownerReadHolds : state.ownerWriteHolds;
  }

  /** Until the last holder's lease ends, whichever side holds it; -2 when nobody does. */
  async remainTimeToLive(): Promise<number> {
    return (await this.state()).ttl;
  }

  /** Deletes the whole read-write lock (readers and writer) and wakes waiters. */
  async forceUnlock(): Promise<boolean> {
    const deleted = await this.runtime.query('forceUnlock', this.name, () =>
      this.runtime.nodes[0]!.run(readWriteForceUnlock, {
        hash: this.id,
        readers: this.readersKey,
        channel: this.channel,
        publish: this.runtime.publishCommand(),
      }),
    );
    this.runtime.markResourceLost(this, 'force-unlocked');
    return deleted;
  }
}

/** The shared half: many owners may read at once, unless another owner writes. */
export class ReadLock extends ReadWriteHalf {
  readonly kind = 'read' as const;
  /** @internal See LockKindContract: readers queued together are woken together. */
  override readonly shared = true;
  /** @internal */
  protected readonly scripts: HalfScripts = { acquire: readAcquire, renew: readRenew, release: readRelease };

  /** Whether any owner holds the read lock. */
  async isLocked(): Promise<boolean> {
    return (await this.state()).readers > 0;
  }
}

/** The exclusive half: one owner, and no reader but itself. */
export class WriteLock extends ReadWriteHalf {
  readonly kind = 'write' as const;
  /** @internal */
  protected readonly scripts: HalfScripts = { acquire: writeAcquire, renew: writeRenew, release: writeRelease };

  /** Whether an owner holds the write lock. */
  async isLocked(): Promise<boolean> {
    return (await this.state()).writerHolds > 0;
  }
}

/**
 * Redisson's RReadWriteLock: `readLock()` is shared by any number of owners, `writeLock()` is
 * exclusive. Both are reentrant, renewed by the watchdog without leaseTime, and fenced (every new
 * hold, read or write, draws a fresh token from the lock name's counter). The writer may take the
 * read lock too and then release the write lock (downgrade); a reader asking for the write lock is
 * refused with UnsupportedLockOperationError (upgrade). Readers waiting behind a writer are woken
 * together when it leaves. New readers are not held back by a waiting writer (no writer preference),
 * as in Redisson: a stream of overlapping readers can keep a writer waiting.
 */
export class ReadWriteLock {
  private readonly read: ReadLock;
  private readonly write: WriteLock;

  /** @internal */
  constructor(
    runtime: LockRuntime,
    readonly name: string,
  ) {
    this.read = new ReadLock(runtime, name);
    this.write = new WriteLock(runtime, name);
  }

  readLock(): ReadLock {
    return this.read;
  }

  writeLock(): WriteLock {
    return this.write;
  }

  /** The writer and the readers as Redis has them now (see LockClient.inspect). */
  inspect(): Promise<LockInspection> {
    return this.read.inspect();
  }
}
