import { LockBackendError } from '../../errors/lock-backend.error.js';
import { LockQuorumError } from '../../errors/lock-quorum.error.js';
import type { RenewResult } from '../../engine/lease-resource.js';
import type { LockNode } from '../../connection/lock-node.js';
import type { AttemptReply, ReleaseReply } from '../../scripts/lock-script.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { registryKey } from '../../engine/held-locks.js';
import { settleWithin } from '../../util/late-timer.js';
import { GRANT_LEASE_MS } from '../exclusive/exclusive.messages.js';
import { fenceRaise } from './fence-raise.script.js';
import { forceUnlock } from '../exclusive/force-unlock.script.js';
import { reentrantAcquire } from '../reentrant/reentrant-acquire.script.js';
import { exclusiveAdjust } from '../exclusive/exclusive-adjust.script.js';
import { exclusiveRelease, type ExclusiveReleaseArgs } from '../exclusive/exclusive-release.script.js';
import { exclusiveRenew } from '../exclusive/exclusive-renew.script.js';
import { BaseLock } from '../base-lock.js';
import { OWNER_FIELDS } from '../exclusive/exclusive-keys.js';
import type { AttemptArgs, AttemptResult } from '../lock-kind.js';
import { REDLOCK_KIND } from './redlock.kind.js';
import { OwnerOrder, type Ordered } from './owner-order.js';

/**
 * Longest a single node may take to answer one step; a slower node counts as not answering. At most a
 * third of the operation timeout (see nodeTimeoutMs): an attempt is two steps (the grants, then the
 * fencing counter's raise) and must fit in one operation timeout with a master down.
 */
export const REDLOCK_NODE_TIMEOUT_MS = 50;
/** Clock drift allowance: 1 % of the lease plus 2 ms (the RedLock algorithm's). */
export const redlockDrift = (leaseMs: number): number => Math.ceil(leaseMs * 0.01) + 2;
/** After a split vote, contenders back off a random 0..this ms so that one of them wins next time. */
const SPLIT_VOTE_JITTER_MS = 40;

type NodeReply<T> = { ok: true; value: T } | { ok: false; error: unknown; late: Promise<T> };

/**
 * RedLock over N independent masters, with the same reentrant semantics as the single-node lock.
 *
 * - Acquire: the reentrant script on every node in parallel, each bounded by a short node timeout.
 *   Held when a majority granted it and validity = lease - elapsed - drift is still positive; grants
 *   of a failed attempt (and late grants) are released at once. Fewer than a majority answering is a
 *   LockQuorumError, not "busy".
 * - Fencing: the token is the highest among the granting majority, then raised on a majority of
 *   nodes before the handle is returned. Any later majority overlaps it, so tokens keep increasing.
 * - Renewal: on every node; renewed when a majority confirms (validity counted as above); lost when a
 *   majority says someone else holds it or it is gone.
 * - Release: on every node.
 */
export class RedLock extends BaseLock {
  readonly kind = 'reentrant' as const;
  /**
   * @internal See LockKindContract. Waiters that lost a split vote are woken together by the undo of
   * the partial grants; trying the masters again at once, they split again, for as long as a master
   * is down (two left, two waiters: found by the simulator). A random pause first breaks the tie.
   */
  readonly wakeJitterMs = SPLIT_VOTE_JITTER_MS;

  /** @internal */
  constructor(runtime: LockRuntime, name: string) {
    super(runtime, name, REDLOCK_KIND);
  }

  private get nodes(): readonly LockNode[] {
    return this.runtime.nodes;
  }

  /**
   * A node's time to answer one step: REDLOCK_NODE_TIMEOUT_MS, or a third of the operation timeout if
   * that is shorter. With 50 ms per step against an operation timeout of 50 ms, every contended attempt
   * with a master down timed out, and a caller waiting without a deadline failed (simulator seed 3534).
   */
  private get nodeTimeoutMs(): number {
    return Math.max(1, Math.min(REDLOCK_NODE_TIMEOUT_MS, Math.floor(this.runtime.operationTimeoutMs / 3)));
  }

  /** The order of this client's commands per lock, owner and master (see OwnerOrder). */
  private get order(): OwnerOrder {
    return OwnerOrder.of(this.runtime);
  }

  /** Sends `send` to master `i` in the order of `owner`'s commands there about this lock. */
  private inOrder<T>(
    owner: string,
    i: number,
    send: () => Promise<T>,
    then?: (value: T, inOrder: boolean) => Promise<unknown> | undefined,
    sendBy?: number,
  ): Ordered<T> {
    return this.order.send(`${this.id}\n${owner}\n${i}`, send, then, sendBy);
  }

  private get quorum(): number {
    return Math.floor(this.nodes.length / 2) + 1;
  }

  /** @internal See LockKindContract. */
  async attempt(args: AttemptArgs): Promise<AttemptResult> {
    // Each master's grant is kept if the attempt succeeds, and given back otherwise, before any later
    // command of the owner runs there: a grant that comes late too (see OwnerOrder).
    // (An attempt that throws keeps nothing: `decide` settles once, so the later call is a no-op.)
    let decide: (kept: boolean) => void = () => undefined;
    const decided = new Promise<boolean>((resolve) => (decide = resolve));
    try {
      return await this.acquireOnMajority(args, decided, decide);
    } finally {
      decide(false);
    }
  }

  private async acquireOnMajority(
    { owner, leaseMs, watchdog }: AttemptArgs,
    decided: Promise<boolean>,
    decide: (kept: boolean) => void,
  ): Promise<AttemptResult> {
    const acquires: Ordered<AttemptReply>[] = [];
    const startedAt = this.runtime.clock.now();
    const replies = await this.onEveryNode(
      (node, i) => {
        acquires[i] = this.inOrder(
          owner,
          i,
          () =>
            node.run(reentrantAcquire, {
              lock: this.id,
              fence: this.fenceKey,
              owner,
              leaseMs,
              waitingClient: '',
              queue: 'not-queued',
              watchdog,
              firstIfFailed: '',
              firstIfAcquired: '',
            }),
          (grant, inOrder) => (grant.acquired ? decided.then((kept) => (kept ? undefined : this.giveBack(node, owner, grant, inOrder))) : undefined),
          startedAt + this.nodeTimeoutMs, // the attempt waits no longer for this master
        );
        return acquires[i].reply;
      },
      this.nodeTimeoutMs,
      (sofar) => sofar.filter((reply) => reply?.ok && reply.value.acquired).length >= this.quorum,
    );
    const granted = replies.flatMap((reply, i) => (reply.ok && reply.value.acquired ? [{ index: i, token: reply.value.token, holds: reply.value.holds }] : []));
    const denied = replies.flatMap((reply) => (reply.ok && !reply.value.acquired ? [reply.value.ttl] : []));
    const answered = granted.length + denied.length;
    const validityMs = leaseMs - (this.runtime.clock.now() - startedAt) - redlockDrift(leaseMs);
    let success = granted.length >= this.quorum && validityMs > 0;

    let token = 0;
    if (success) {
      const held = this.runtime.held.find(registryKey(owner, this));
      token = held?.active && Math.max(...granted.map((g) => g.holds)) > 1 ? held.token : Math.max(...granted.map((g) => g.token));
      const raised = await this.onEveryNode(
        (node) => node.run(fenceRaise, { fence: this.fenceKey, lock: this.id, owner, token }),
        this.nodeTimeoutMs,
        (sofar) => sofar.filter((reply) => reply?.ok).length >= this.quorum,
      );
      success = raised.filter((reply) => reply.ok).length >= this.quorum && leaseMs - (this.runtime.clock.now() - startedAt) - redlockDrift(leaseMs) > 0;
    }
    decide(success);
    if (success) {
      return { acquired: true, token, holds: Math.max(...granted.map((g) => g.holds)), validityMs: leaseMs - redlockDrift(leaseMs) };
    }
    // The grants that came in time are given back before the attempt answers (late ones when they come).
    await Promise.all(granted.map((g) => acquires[g.index]!.done));
    if (answered < this.quorum) {
      const failure = replies.find((reply) => !reply.ok) as { error: unknown } | undefined;
      throw new LockQuorumError(this.name, answered, this.nodes.length, failure?.error);
    }
    const positive = denied.filter((ttl) => ttl > 0);
    // Nobody may hold a majority (a split vote): retry soon, after a random pause.
    const ttl = granted.length > 0 || positive.length === 0 ? 1 + Math.floor(Math.random() * SPLIT_VOTE_JITTER_MS) : Math.min(...positive);
    return { acquired: false, ttl };
  }

  /** @internal See LockKindContract. */
  async adjustHolds(owner: string, holds: number): Promise<void> {
    await this.onEveryNode((node, i) => this.inOrder(owner, i, () => node.run(exclusiveAdjust, { lock: this.id, owner, holds })).reply);
  }

  /** @internal See LeaseResource. */
  async renew(owner: string, leaseMs: number): Promise<RenewResult> {
    const startedAt = this.runtime.clock.now();
    const replies = await this.onEveryNode(
      (node) => node.run(exclusiveRenew, { lock: this.id, owner, leaseMs }),
      this.nodeTimeoutMs,
      (sofar) => sofar.filter((reply) => reply?.ok && reply.value).length >= this.quorum,
    );
    const renewed = replies.filter((reply) => reply.ok && reply.value).length;
    const refused = replies.filter((reply) => reply.ok && !reply.value).length;
    if (renewed >= this.quorum) return { renewed: true, validityMs: leaseMs - (this.runtime.clock.now() - startedAt) - redlockDrift(leaseMs) };
    // Lost once too many nodes say it is gone for a majority to remain possible.
    return { renewed: false, lost: refused > this.nodes.length - this.quorum };
  }

  /** @internal See LeaseResource. */
  async release(owner: string, all: boolean, expectedHolds?: number): Promise<ReleaseReply> {
    // Released everywhere, answered once a majority answered: a master down does not fail the unlock.
    // In order after the owner's acquires there: a release that overtook a late grant would leave it held.
    const replies = await this.onEveryNode(
      (node, i) => this.inOrder(owner, i, () => node.run(exclusiveRelease, this.releaseArgs(owner, all, expectedHolds))).reply,
      this.runtime.operationTimeoutMs,
      (sofar) => sofar.filter((reply) => reply?.ok).length >= this.quorum,
    );
    await this.lastStep(replies);
    const answers = replies.flatMap((reply) => (reply.ok ? [reply.value] : []));
    // Fewer than a majority answered: the outcome is unknown (a node that did not answer may still hold
    // it, and a majority of holders is a holder), so the release is retried (simulator seed 4744: one
    // master's answer made an unlock succeed while two slow ones kept the hold).
    if (answers.length < this.quorum) {
      const failure = replies.find((reply) => !reply.ok) as { error: unknown };
      throw new LockQuorumError(this.name, answers.length, this.nodes.length, failure.error, 'unlock');
    }
    // What is left is what a majority still holds: the quorum-th largest count, a master that did not
    // answer counting none ('already applied' there: the holds expected, less the one released). The
    // largest count kept an owner holding on one master (simulator seed 57907: a re-entry that one
    // master granted as a new hold, so the unlock before the last freed it there; the owner held on
    // one master of three, valid by its clock, while another took the other two).
    const counts = answers.map((answer) =>
      answer.outcome === 'released' ? answer.remaining : answer.outcome === 'already-applied' ? Math.max(0, (expectedHolds ?? 1) - 1) : 0,
    );
    const remaining = this.majorityHolds(counts);
    if (remaining > 0 || answers.some((answer) => answer.outcome === 'released')) return { outcome: 'released', remaining, toAnotherProcess: false };
    return answers.some((answer) => answer.outcome === 'not-owner') ? { outcome: 'not-owner' } : { outcome: 'already-applied' };
  }

  /** What a majority of the masters still holds: the quorum-th largest count, a master that did not answer counting none. */
  private majorityHolds(counts: readonly number[]): number {
    return [...counts, ...Array<number>(this.nodes.length - counts.length).fill(0)].sort((a, b) => b - a)[this.quorum - 1]!;
  }

  /**
   * The masters that had not answered an unlock get one node step more: on a healthy deployment an
   * unlock returns once the lock is gone from every master, not from a majority only (a forceUnlock or
   * an inspection right after it found the last master still holding it). A master down costs at
   * most that step.
   */
  private async lastStep(replies: readonly NodeReply<ReleaseReply>[]): Promise<void> {
    const unanswered = replies.flatMap((reply) => (reply.ok ? [] : [reply.late]));
    if (unanswered.length === 0) return;
    // What the slower masters have not answered yet goes on as background work, which close() waits
    // for: it ended before a slow master had run its release, and an app that exits after close()
    // left the lock there for its lease (simulator seed 9993, a process on a slow link).
    const late = this.runtime.background.run('release', this.name, () => Promise.allSettled(unanswered));
    await settleWithin(this.runtime.clock, late, this.nodeTimeoutMs, () => undefined);
  }

  async isLocked(): Promise<boolean> {
    const replies = await this.read('isLocked', (node) => node.redis.exists(this.id));
    return replies.filter((exists) => exists === 1).length >= this.quorum;
  }

  async getHoldCount(): Promise<number> {
    const owner = this.ownerByName();
    if (!owner) return 0;
    const replies = await this.read('getHoldCount', (node) => node.redis.hmget(this.id, OWNER_FIELDS));
    const mine = replies.filter(([holder]) => holder === owner).map(([, holds]) => Number(holds));
    return mine.length >= this.quorum ? Math.max(...mine) : 0;
  }

  /** The lease left on the majority: the quorum-th longest of the nodes' TTLs, or -2. */
  async remainTimeToLive(): Promise<number> {
    const ttls = (await this.read('remainTimeToLive', (node) => node.redis.pttl(this.id))).filter((ttl) => ttl !== -2).sort((a, b) => b - a);
    return ttls.length >= this.quorum ? ttls[this.quorum - 1]! : -2;
  }

  async forceUnlock(): Promise<boolean> {
    const replies = await this.read('forceUnlock', (node) =>
      node.run(forceUnlock, { lock: this.id, channel: this.channel, publish: this.runtime.publishCommand() }),
    );
    this.runtime.markResourceLost(this, 'force-unlocked');
    return replies.some((deleted) => deleted);
  }

  /**
   * Gives back one master's grant that an attempt did not keep. In the owner's order there (see
   * OwnerOrder) nothing of the owner ran since the grant, so the release undoes exactly it: one hold, if
   * the master still counts the holds the grant left (a raise of the attempt may have changed its token).
   * Out of order (its reply came too late), by the token it drew: it must change nothing if the owner
   * has since let go and taken the lock again there (a new lifetime, another token). (Should the
   * attempt's raise have reached that master too, the token differs and the grant stays until its
   * lease ends: a minority's hold, never a holder.)
   */
  private giveBack(node: LockNode, owner: string, grant: { token: number; holds: number }, inOrder: boolean): Promise<void> {
    // An owner that holds nothing here (and acquires nothing else) gives back every hold that master
    // counts: more than one is a phantom (a grant whose reply was lost), which each failed attempt would
    // otherwise re-enter, lengthening its lease, and keep for good: with a master lost, two phantoms of
    // two owners on the other two kept every caller from a quorum (found by the simulator, seed 21974).
    const key = registryKey(owner, this);
    const alone = !this.runtime.held.find(key)?.active && this.runtime.held.acquisitionsInFlight(key) <= 1;
    const args = inOrder ? { ...this.releaseArgs(owner, alone, grant.holds) } : { ...this.releaseArgs(owner, false, undefined), token: grant.token };
    return node
      .run(exclusiveRelease, args)
      .then(() => undefined)
      .catch((error: unknown) => this.runtime.background.report('release', this.name, error));
  }

  private releaseArgs(owner: string, all: boolean, expectedHolds: number | undefined): ExclusiveReleaseArgs {
    return {
      lock: this.id,
      fence: this.fenceKey,
      channel: this.channel,
      owner,
      publish: this.runtime.publishCommand(),
      all,
      expectedHolds,
      grantLeaseMs: GRANT_LEASE_MS,
      stillWaitingClient: '',
      stillWaitingFirst: '',
      alwaysPublish: true,
      // Each node may hold another token (a raise that did not reach it): the deadline guards instead.
      token: undefined,
    };
  }

  /**
   * Runs `step` on every node in parallel; a node that fails or exceeds `timeoutMs` counts as not
   * answering. With `enough`, the replies are returned as soon as it says so (a majority granted, say):
   * a node down does not add its timeout to every step while a majority answers; a node not waited for
   * counts as not answering, and its reply, if it comes, is `late`.
   */
  private onEveryNode<T>(
    step: (node: LockNode, index: number) => Promise<T>,
    timeoutMs = this.nodeTimeoutMs,
    enough?: (replies: readonly (NodeReply<T> | undefined)[]) => boolean,
  ): Promise<NodeReply<T>[]> {
    const pendings = this.nodes.map((node, i) => step(node, i));
    const replies: (NodeReply<T> | undefined)[] = pendings.map(() => undefined);
    return new Promise((resolve) => {
      let left = pendings.length;
      let done = false;
      pendings.forEach((pending, i) => {
        const target = this.nodes[i]!.target;
        settleWithin(
          this.runtime.clock,
          pending.then((value): NodeReply<T> => ({ ok: true, value })),
          timeoutMs,
          (): NodeReply<T> => ({ ok: false, error: new Error(`${target}: no reply within ${timeoutMs} ms`), late: pending }),
        )
          .catch((error: unknown): NodeReply<T> => ({ ok: false, error, late: pending }))
          .then((reply) => {
            if (done) return;
            replies[i] = reply;
            left -= 1;
            if (left > 0 && !enough?.(replies)) return;
            done = true;
            resolve(
              replies.map(
                (each, j) => each ?? { ok: false, error: new Error(`${this.nodes[j]!.target}: not waited for (a majority had answered)`), late: pendings[j]! },
              ),
            );
          });
      });
    });
  }

  /** A read that needs a majority of answers. */
  private async read<T>(operation: string, step: (node: LockNode) => Promise<T>): Promise<T[]> {
    this.runtime.assertOpen(operation, this.name);
    const replies = await this.onEveryNode(step, this.runtime.operationTimeoutMs);
    const answers = replies.flatMap((reply) => (reply.ok ? [reply.value] : []));
    if (answers.length < this.quorum) {
      throw new LockBackendError(operation, this.name, (replies.find((reply) => !reply.ok) as { error: unknown }).error);
    }
    return answers;
  }
}
