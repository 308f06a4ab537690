import { LeaseKeeper } from '../../distributed-lock/src/core/engine/lease-keeper.js';
import { LockHandle } from '../../distributed-lock/src/core/context/lock-handle.js';
import { RoundTrips } from '../../distributed-lock/src/core/engine/round-trips.js';
import { BackgroundWork } from '../../distributed-lock/src/core/engine/background-work.js';
import type { HeldLock } from '../../distributed-lock/src/core/engine/held-locks.js';
import { InstanceRegistration } from '../../distributed-lock/src/core/inspection/instance-registration.js';
import { Acquisition } from '../../distributed-lock/src/core/locks/acquisition.js';
import { LockQuorumError } from '../../distributed-lock/src/core/errors/lock-quorum.error.js';
import { RedLock } from '../../distributed-lock/src/core/locks/redlock/red-lock.js';
import { exclusiveRelease } from '../../distributed-lock/src/core/locks/exclusive/exclusive-release.script.js';
import { OwnerOrder } from '../../distributed-lock/src/core/locks/redlock/owner-order.js';
import { NOT_AFTER } from '../../distributed-lock/src/core/scripts/lock-script.js';
import { LockLine, type Place } from '../../distributed-lock/src/core/waiting/lock-line.js';
import type { Grant } from '../../distributed-lock/src/core/waiting/line-event.js';
import type { ServerMutation } from './sim-server.js';

/**
 * A known bug, put back on purpose by the simulator (never by a flag in the library): the simulator
 * must catch every one of them, which is what shows that its faults and invariants can see that kind
 * of bug at all. Server-side mutants rewrite the library's Lua or its arguments as the simulated
 * server receives them; library-side ones replace a method of the library's classes for the run, with
 * the code as it was before the fix. A rewrite that no longer matches the library fails loudly (the
 * run reports the mutant as not applied).
 */
export interface Mutant {
  readonly name: string;
  /** The bug, and what it broke when it was real. */
  readonly description: string;
  readonly server?: ServerMutation;
  /** A change to the library's objects for the run; returns what undoes it. */
  readonly apply?: () => () => void;
}

/** A rewrite of a script's text (the scripts' own files, and the batch script that carries them). */
function luaRewrite(from: string, to: string): (lua: string) => string {
  return (lua) => (lua.includes(from) ? lua.split(from).join(to) : lua);
}

/** Replaces a method of a class's prototype for the run (private ones too: they are on the prototype). */
function replaceMethod(target: object, name: string, method: (this: never, ...args: never[]) => unknown): () => () => void {
  return () => {
    const prototype = target as Record<string, unknown>;
    const original = prototype[name];
    if (typeof original !== 'function') throw new Error(`the mutant's method ${name} no longer exists: update libs/lock-simulator/src/mutants.ts`);
    prototype[name] = method;
    return () => {
      prototype[name] = original;
    };
  };
}

/** What the library's private members look like to a mutant that puts old code back. */
interface KeeperInternals {
  lose(held: HeldLock, reason: string): void;
  background: { run(operation: string, name: string, work: () => Promise<unknown>): void };
  roundTrips: { bounded<T>(operation: Promise<T>): Promise<T> };
}
interface AcquisitionInternals {
  runtime: KeeperInternals;
  lock: { name: string; release(owner: string, all: boolean): Promise<unknown> };
  owner: string;
}

interface LineInternals {
  places: Place[];
  closed: boolean;
}

interface RedLockInternals {
  releaseArgs(owner: string, all: boolean, expectedHolds: number | undefined): unknown;
}
const nothing = (): void => undefined;

const RELEASE_ARGS = 'local owner_id, publish, count, expected_holds, grant_lease = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]';

export const MUTANTS: readonly Mutant[] = [
  {
    name: 'late-guard-off',
    description:
      'scripts run past their not-after deadline (the guard of round 3): an acquisition its caller gave up on, run late by a reconnect or a NOSCRIPT resend, leaves a phantom hold; a late release drops a hold taken after it',
    server: {
      name: 'late-guard-off',
      argv: (argv) => argv.map((arg) => (arg.startsWith(NOT_AFTER) ? NOT_AFTER : arg)),
    },
  },
  {
    name: 'fencing-floor-off',
    description: 'fencing tokens not floored by the server clock: after Redis loses its data the counter starts again at 1, below tokens a resource has seen',
    server: { name: 'fencing-floor-off', lua: luaRewrite('if token <= floor then', 'if false then') },
  },
  {
    name: 'last-unlock-one-hold',
    description:
      "the owner's last unlock drops one hold, not every hold Redis counts: a phantom (a grant whose reply was lost, counted again) stays held after a successful unlock (round 3's fault injection)",
    server: { name: 'last-unlock-one-hold', lua: luaRewrite(RELEASE_ARGS, `${RELEASE_ARGS}\ncount = '1'`) },
  },
  {
    name: 'release-token-off',
    description:
      'an exclusive release ignores the token of the hold it means: a late release (a retry, a given-back late grant) drops a hold of a later lifetime',
    server: {
      name: 'release-token-off',
      lua: luaRewrite(
        "if holder ~= owner_id or (token ~= '' and state[4] ~= token) or (unclaimed_grant and not state[5]) then",
        'if holder ~= owner_id or (unclaimed_grant and not state[5]) then',
      ),
    },
  },
  {
    name: 'expected-holds-off',
    description: 'a retried release does not check the holds it expects: a release that went through the first time drops a second hold',
    server: { name: 'expected-holds-off', lua: luaRewrite("if expected_holds ~= '' and holds ~= expected_holds then", 'if false then') },
  },
  {
    name: 'lease-margin-off',
    description:
      "the local lease is the whole lease: Redis reads its clock to the millisecond and process clocks drift, so a holder counted itself valid up to a millisecond past its lease's end in Redis (found by this simulator)",
    apply: replaceMethod(LeaseKeeper.prototype, 'validity', (validityMs: number) => validityMs),
  },
  {
    name: 'redlock-release-largest-count',
    description:
      'a RedLock release answers with the largest count of holds left on any master, not what a majority holds: a re-entry one master granted as a new hold was freed there by the unlock before the last, and the owner, holding on one master of three, counted itself the holder while another took the other two (found by this simulator)',
    apply: replaceMethod(RedLock.prototype, 'majorityHolds', (counts: readonly number[]) => Math.max(0, ...counts)),
  },
  {
    name: 'renewal-keeps-later-deadline',
    description:
      "a renewal only ever lengthens the local deadline: a semaphore grant claimed with a lease shorter than the grant's was held locally past its end in Redis (found by this simulator)",
    apply: (() => {
      const renew = (LeaseKeeper.prototype as unknown as { renew(held: HeldLock): Promise<void> }).renew;
      return replaceMethod(LeaseKeeper.prototype, 'renew', async function (this: LeaseKeeper, held: HeldLock) {
        const before = held.validUntil;
        await renew.call(this, held);
        if (held.active) held.validUntil = Math.max(before, held.validUntil);
      });
    })(),
  },
  {
    name: 'late-grant-given-back-blindly',
    description:
      "a late grant is given back without its token, whatever the kind: a semaphore's later attempt that took that very lease, or a later lifetime of the lock, lost its hold in Redis while its caller held it (found by this simulator)",
    apply: replaceMethod(Acquisition.prototype, 'giveBackLateGrant', async function (this: AcquisitionInternals, pending: Promise<{ acquired: boolean }>) {
      const late = await pending.catch(() => undefined);
      if (!late?.acquired) return;
      const { runtime, lock } = this;
      await runtime.roundTrips.bounded(lock.release(this.owner, false));
    }),
  },
  {
    name: 'lease-over-frees-reentry',
    description:
      'a lease found over locally is freed in Redis even while the same owner acquires the lock again: the re-entry had lengthened it there, and registered a lock another caller was given (found by this simulator)',
    apply: replaceMethod(LeaseKeeper.prototype, 'leaseOver', function (this: KeeperInternals, held: HeldLock) {
      this.lose(held, 'lease-expired');
      this.background.run('release', held.resource.name, () => this.roundTrips.bounded(held.resource.release(held.owner, true, undefined, held.token)));
    }),
  },
  {
    name: 'handover-token-only',
    description:
      "a grant's message goes to the first caller of the process, whoever the grant names: the grant's token alone decides who takes it (the rule d00fc1d reverted). The caller it names, whose own attempt finds the lock held in its name, holds it too: two holders (a cluster run found it by luck)",
    apply: replaceMethod(LockLine.prototype, 'address', function (this: LineInternals, owner: string, grant: Grant | undefined) {
      const place = grant ? this.places[0] : this.places.find((each) => each.options.owner === owner);
      if (!place) return;
      if (grant && !place.grant && !this.closed) place.grant = grant;
      place.waiter.notify();
    }),
  },
  {
    name: 'grant-held-after-unknown-attempt',
    description:
      "a grant's message is held by its caller even after an attempt of its whose outcome is unknown (given up on, or cut off): that attempt had run after the grant and taken it anew, with a new token and the caller's short lease, and the caller held the lock by the message past that lease (found by this simulator)",
    apply: (() => {
      const takeGrant = (Acquisition.prototype as unknown as { takeGrant(grant: Grant): unknown }).takeGrant;
      return replaceMethod(Acquisition.prototype, 'takeGrant', function (this: { abandoned: unknown; uncertain: boolean }, grant: Grant) {
        const { abandoned, uncertain } = this;
        this.abandoned = undefined;
        this.uncertain = false;
        try {
          return takeGrant.call(this, grant);
        } finally {
          this.abandoned = abandoned;
          this.uncertain = uncertain;
        }
      });
    })(),
  },
  {
    name: 'redlock-giveback-one-hold',
    description:
      "a failed RedLock attempt gives back one hold on each master that granted it, even for an owner that holds nothing: a phantom hold there (a grant whose reply was lost) was re-entered by each attempt, its lease lengthened, and kept for good; with a master lost, two owners' phantoms kept every caller from a quorum (found by this simulator)",
    apply: replaceMethod(
      RedLock.prototype,
      'giveBack',
      function (
        this: RedLockInternals,
        node: { run(script: unknown, args: unknown): Promise<unknown> },
        owner: string,
        grant: { token: number; holds: number },
        inOrder: boolean,
      ) {
        const args = inOrder ? this.releaseArgs(owner, false, grant.holds) : { ...(this.releaseArgs(owner, false, undefined) as object), token: grant.token };
        return node.run(exclusiveRelease, args).then(nothing, nothing);
      },
    ),
  },
  {
    name: 'redlock-unlock-one-answer',
    description:
      "a RedLock release answered by fewer than a majority of the masters counts as done: an unlock succeeded on one master's answer while two slow ones kept the hold (found by this simulator)",
    apply: (() => {
      const release = RedLock.prototype.release;
      const applyRelease = replaceMethod(RedLock.prototype, 'release', async function (this: RedLock, ...args: Parameters<RedLock['release']>) {
        try {
          return await release.apply(this, args);
        } catch (error) {
          if (error instanceof LockQuorumError && error.answered > 0) return { outcome: 'released', remaining: 0, toAnotherProcess: false };
          throw error;
        }
      });
      // The code before the fix also answered without waiting for the masters that had not answered.
      const applyLastStep = replaceMethod(RedLock.prototype, 'lastStep', () => Promise.resolve());
      return () => {
        const undo = [applyRelease(), applyLastStep()];
        return () => undo.forEach((each) => each());
      };
    })(),
  },
  {
    name: 'redlock-commands-unordered',
    description:
      "an owner's commands to a RedLock master run in whatever order they land, and a grant is given back by owner alone: a release overtook a late acquire (resent as EVAL after NOSCRIPT) and left a hold after a successful unlock; a late grant given back after a multi-lock's undo and retry dropped the retry's hold (both found by this simulator)",
    apply: () => {
      const undoSend = replaceMethod(OwnerOrder.prototype, 'send', function <
        T,
      >(key: string, send: () => Promise<T>, then?: (value: T) => Promise<unknown> | undefined) {
        void key;
        const reply = send();
        const done = reply.then(
          (value) => then?.(value),
          () => undefined,
        );
        return { reply, done: done.then(nothing, nothing) };
      })();
      const undoGiveBack = replaceMethod(
        RedLock.prototype,
        'giveBack',
        function (this: RedLockInternals, node: { run(script: unknown, args: unknown): Promise<unknown> }, owner: string) {
          return node.run(exclusiveRelease, this.releaseArgs(owner, false, undefined)).then(nothing, nothing);
        },
      )();
      return () => {
        undoGiveBack();
        undoSend();
      };
    },
  },
  {
    name: 'round-trips-unbounded',
    description:
      "a command waits for its reply however long it takes (no operation timeout): during an outage, with the client's offline queue, a call is answered only when Redis is back, long after its waitTime and one operation timeout (test/faults/outage-bounds)",
    apply: replaceMethod(RoundTrips.prototype, 'bounded', (operation: Promise<unknown>) => operation),
  },
  {
    name: 'release-only-if-held',
    description:
      "withLock, a leader's term and `await using` release a lock at the end only if it reads as held: one whose lease ran out while a renewal was on its way read as not held, the renewal kept it, and the watchdog renewed it for good with nobody left to release it (found by this simulator)",
    apply: replaceMethod(LockHandle.prototype, 'releaseUnlessOver', async function (this: LockHandle) {
      if (this.isHeld) await this.unlock();
    }),
  },
  {
    name: 'redlock-late-turns-sent',
    description:
      "an owner's acquisition on a RedLock master is sent when its turn comes there, however late: on a master slower than the attempts' wait for it, they piled up, each sent and given back seconds after its attempt had failed, after its caller had given up and after close() (found by this simulator, seed 141 of a slow link)",
    apply: (() => {
      const send = OwnerOrder.prototype.send;
      return replaceMethod(OwnerOrder.prototype, 'send', function (this: OwnerOrder, key: string, command: () => Promise<unknown>, then?: never) {
        return send.call(this, key, command, then);
      });
    })(),
  },
  {
    name: 'close-skips-background-releases',
    description:
      "close() does not wait for the work it started in the background (the releases of what its process held, a grant given back, a waiter's withdrawal) before the connections go: a lock stays in Redis for its lease, or for good with no lease, with nobody behind it",
    apply: replaceMethod(BackgroundWork.prototype, 'settledBy', async () => new Map()),
  },
  {
    name: 'close-skips-acquisitions',
    description:
      'close() does not wait for the acquisitions in flight: a reply that came after close() had ended granted the lock to a process on its way out, and its give-back came too late for a process that exits after close() (found by this simulator)',
    apply: () => {
      const undo = [
        replaceMethod(BackgroundWork.prototype, 'acquisitionStarted', nothing)(),
        replaceMethod(BackgroundWork.prototype, 'acquisitionEnded', nothing)(),
      ];
      return () => undo.forEach((each) => each());
    },
  },
  {
    name: 'registration-two-commands',
    description: "a process's registration written as HSET then PEXPIRE: one that died between them left a key that never expired (found by this simulator)",
    apply: replaceMethod(
      InstanceRegistration.prototype,
      'refresh',
      function (this: {
        started: boolean;
        redis: { hset(key: string, pairs: readonly string[]): Promise<unknown>; pexpire(key: string, ms: number): Promise<unknown> };
        key: string;
        fields: string[];
        failed: (error: unknown) => void;
      }) {
        if (!this.started) return;
        this.redis
          .hset(this.key, this.fields)
          .then(() => this.redis.pexpire(this.key, 60_000))
          .catch(this.failed);
      },
    ),
  },
];

export function mutantNamed(name: string): Mutant {
  const mutant = MUTANTS.find((each) => each.name === name);
  if (!mutant) throw new Error(`no mutant "${name}"; known: ${MUTANTS.map((each) => each.name).join(', ')}`);
  return mutant;
}
