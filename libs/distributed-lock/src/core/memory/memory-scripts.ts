import { fairAcquire as FAIR_ACQUIRE_SCRIPT } from '../scripts/fair-acquire.script.js';
import { fairLeave as FAIR_LEAVE_SCRIPT } from '../scripts/fair-leave.script.js';
import { fenceRaise as FENCE_RAISE_SCRIPT } from '../scripts/fence-raise.script.js';
import { forceUnlock as FORCE_UNLOCK_SCRIPT } from '../scripts/force-unlock.script.js';
import type { AnyLockScript } from '../scripts/lock-script.js';
import { readAcquire as READ_ACQUIRE_SCRIPT } from '../scripts/read-acquire.script.js';
import { readWriteAdjust as READ_WRITE_ADJUST_SCRIPT, readWriteForceUnlock as READ_WRITE_FORCE_UNLOCK_SCRIPT, readWriteState as READ_WRITE_STATE_SCRIPT } from '../scripts/read-write-admin.script.js';
import { readRelease as READ_RELEASE_SCRIPT, writeRelease as WRITE_RELEASE_SCRIPT } from '../scripts/read-write-release.script.js';
import { readRenew as READ_RENEW_SCRIPT, writeRenew as WRITE_RENEW_SCRIPT } from '../scripts/read-write-renew.script.js';
import { reentrantAcquire as REENTRANT_ACQUIRE_SCRIPT } from '../scripts/reentrant-acquire.script.js';
import { reentrantAdjust as REENTRANT_ADJUST_SCRIPT } from '../scripts/reentrant-adjust.script.js';
import { reentrantHandover as REENTRANT_HANDOFF_SCRIPT } from '../scripts/reentrant-handover.script.js';
import { reentrantRelease as REENTRANT_RELEASE_SCRIPT } from '../scripts/reentrant-release.script.js';
import { reentrantRenew as REENTRANT_RENEW_SCRIPT } from '../scripts/reentrant-renew.script.js';
import { reentrantWithdraw as REENTRANT_UNMARK_SCRIPT } from '../scripts/reentrant-withdraw.script.js';
import { writeAcquire as WRITE_ACQUIRE_SCRIPT } from '../scripts/write-acquire.script.js';
import type { MemoryKeyspace } from './memory-keyspace.js';

/**
 * A lock script's twin for the in-memory store: the same steps as the Lua, on a MemoryKeyspace,
 * with the arguments as Redis receives them (strings). Each runs synchronously, hence atomically.
 * The Lua in `../scripts` is the reference; the conformance suite runs both against the same tests.
 */
export type MemoryScript = (ks: MemoryKeyspace, keys: string[], argv: string[]) => unknown;

/** next-token.lua.ts: the counter plus one, never below the clock in ms x 1000 (plus one). */
function nextToken(ks: MemoryKeyspace, fence: string): number {
  const floor = ks.serverTimeMs() * 1000;
  let token = ks.incr(fence);
  if (token <= floor) {
    token = floor + 1;
    ks.set(fence, String(token));
  }
  return token;
}

function reentrantAcquire(ks: MemoryKeyspace, [lock, fence]: string[], [owner, lease, clientArg, more]: string[]): [number, number] {
  const client = clientArg ?? '';
  const leaseMs = Number(lease);
  const markBack = (): void => void ks.hset(lock!, `w:${client}`, ks.hincrby(lock!, 'wseq', 1));
  const current = ks.hget(lock!, 'owner');
  if (current === null || (client !== '' && current === `${client}:grant`)) {
    const token = current === null ? nextToken(ks, fence!) : Number(ks.hget(lock!, 'token'));
    ks.hset(lock!, 'owner', owner!, 'holds', 1, 'token', token);
    ks.pexpire(lock!, leaseMs);
    if (client !== '' && more === '1') markBack();
    else if (client !== '' && more === '0') ks.hdel(lock!, `w:${client}`);
    return [token, 1];
  }
  if (current === owner) {
    if (client !== '' && more === '0') ks.hdel(lock!, `w:${client}`);
    const holds = ks.hincrby(lock!, 'holds', 1);
    if (ks.pttl(lock!) < leaseMs) ks.pexpire(lock!, leaseMs);
    return [Number(ks.hget(lock!, 'token')), holds];
  }
  if (client !== '' && ks.hexists(lock!, `w:${client}`) === 0) markBack();
  return [0, ks.pttl(lock!)];
}

/** pass-on.lua.ts: grants a freed lock to the client that has waited longest (not `exclude`). */
function passOn(ks: MemoryKeyspace, lock: string, fence: string, channel: string, grantLease: string, exclude: string): number | null {
  let next: string | undefined;
  let nextSeq = Infinity;
  for (const [field, value] of Object.entries(ks.hgetall(lock))) {
    if (!field.startsWith('w:')) continue;
    const client = field.slice(2);
    if (client !== exclude && Number(value) < nextSeq) {
      next = client;
      nextSeq = Number(value);
    }
  }
  if (next === undefined) return null;
  const token = nextToken(ks, fence);
  ks.hset(lock, 'owner', `${next}:grant`, 'holds', 1, 'token', token);
  ks.hdel(lock, `w:${next}`);
  ks.pexpire(lock, grantLease);
  ks.publish(channel, `grant:${next}`);
  return token;
}

function reentrantRelease(ks: MemoryKeyspace, [lock, fence, channel]: string[], [owner, , count, expected, grantLease, mineArg, alwaysPublish]: string[]): number {
  const [current, holds, wseq] = ks.hmget(lock!, 'owner', 'holds', 'wseq');
  if (current !== owner) return -1;
  if (expected !== '' && holds !== expected) return -2;
  if (count !== 'all' && Number(holds) > 1) return ks.hincrby(lock!, 'holds', -1);
  if (wseq !== null && passOn(ks, lock!, fence!, channel!, grantLease!, '') !== null) {
    const mine = mineArg ?? '';
    if (mine !== '' && ks.hget(lock!, 'owner') !== `${mine}:grant`) ks.hset(lock!, `w:${mine}`, ks.hincrby(lock!, 'wseq', 1));
    return 0;
  }
  ks.del(lock!);
  if (wseq !== null || alwaysPublish === '1') ks.publish(channel!, 'released');
  return 0;
}

function reentrantHandoff(
  ks: MemoryKeyspace,
  [lock, fence, channel]: string[],
  [owner, successor, lease, client, yieldToOthers, , successorIsLast, grantLease]: string[],
): [number, number] {
  const [current, holds] = ks.hmget(lock!, 'owner', 'holds');
  if (current !== owner) return [-1, 0];
  if (Number(holds) > 1) return [ks.hincrby(lock!, 'holds', -1), 0];
  if (yieldToOthers === '1' && passOn(ks, lock!, fence!, channel!, grantLease!, client!) !== null) {
    ks.hset(lock!, `w:${client}`, ks.hincrby(lock!, 'wseq', 1));
    return [0, -1];
  }
  const token = nextToken(ks, fence!);
  ks.hset(lock!, 'owner', successor!, 'holds', 1, 'token', token);
  ks.pexpire(lock!, Number(lease));
  if (successorIsLast === '1') ks.hdel(lock!, `w:${client}`);
  return [0, token];
}

function reentrantUnmark(ks: MemoryKeyspace, [lock, fence, channel]: string[], [client, , grantLease]: string[]): number {
  ks.hdel(lock!, `w:${client}`);
  if (ks.hget(lock!, 'owner') !== `${client}:grant`) return 0;
  if (passOn(ks, lock!, fence!, channel!, grantLease!, client!) === null) {
    ks.del(lock!);
    ks.publish(channel!, 'released');
  }
  return 1;
}

function reentrantRenew(ks: MemoryKeyspace, [lock]: string[], [owner, lease]: string[]): number {
  if (ks.hget(lock!, 'owner') !== owner) return 0;
  if (ks.pttl(lock!) < Number(lease)) ks.pexpire(lock!, Number(lease));
  return 1;
}

function reentrantAdjust(ks: MemoryKeyspace, [lock]: string[], [owner, holds]: string[]): number {
  if (ks.hget(lock!, 'owner') !== owner) return 0;
  ks.hset(lock!, 'holds', holds!);
  return 1;
}

function forceUnlock(ks: MemoryKeyspace, [lock, channel]: string[]): number {
  if (ks.del(lock!) === 1) {
    ks.publish(channel!, 'released');
    return 1;
  }
  return 0;
}

function fenceRaise(ks: MemoryKeyspace, [fence, lock]: string[], [owner, token]: string[]): number {
  const value = Number(token);
  if (Number(ks.get(fence!) ?? '0') < value) ks.set(fence!, String(value));
  if (ks.hget(lock!, 'owner') === owner) ks.hset(lock!, 'token', value);
  return 1;
}

/** FAIR_QUEUE_PRELUDE: the server's time, and queued waiters whose entry was not refreshed dropped. */
function fairPrelude(ks: MemoryKeyspace, queue: string, deadlines: string): number {
  const now = ks.serverTimeMs();
  for (const waiter of ks.zrangebyscore(deadlines, '-inf', now)) {
    ks.zrem(queue, waiter);
    ks.zrem(deadlines, waiter);
  }
  return now;
}

function fairAcquire(ks: MemoryKeyspace, [lock, fence, queue, deadlines]: string[], [owner, lease, timeoutArg, enqueue]: string[]): [number, number] {
  const now = fairPrelude(ks, queue!, deadlines!);
  const leaseMs = Number(lease);
  const current = ks.hget(lock!, 'owner');
  if (current === owner) {
    const holds = ks.hincrby(lock!, 'holds', 1);
    if (ks.pttl(lock!) < leaseMs) ks.pexpire(lock!, leaseMs);
    return [Number(ks.hget(lock!, 'token')), holds];
  }
  const first = ks.zrange(queue!, 0, 0)[0];
  if (current === null && (first === undefined || first === owner)) {
    ks.zrem(queue!, owner!);
    ks.zrem(deadlines!, owner!);
    const token = nextToken(ks, fence!);
    ks.hset(lock!, 'owner', owner!, 'holds', 1, 'token', token);
    ks.pexpire(lock!, leaseMs);
    return [token, 1];
  }
  const timeout = Number(timeoutArg);
  if (enqueue === '1') {
    if (ks.zscore(queue!, owner!) === null) {
      const last = ks.zrange(queue!, -1, -1, true);
      const ticket = last.length > 0 ? Number(last[1]) + 1 : 1;
      ks.zadd(queue!, ticket, owner!);
    }
    ks.zadd(deadlines!, now + timeout, owner!);
    for (const key of [queue!, deadlines!]) {
      if (ks.pttl(key) < 2 * timeout) ks.pexpire(key, 2 * timeout);
    }
  }
  if (current !== null) return [0, ks.pttl(lock!)];
  const firstDeadline = ks.zscore(deadlines!, first!);
  if (firstDeadline === null) return [0, timeout];
  return [0, Math.max(1, Number(firstDeadline) - now)];
}

function fairLeave(ks: MemoryKeyspace, [lock, channel, queue, deadlines]: string[], [owner]: string[]): number {
  fairPrelude(ks, queue!, deadlines!);
  const first = ks.zrange(queue!, 0, 0)[0];
  if (ks.zrem(queue!, owner!) === 0) {
    ks.zrem(deadlines!, owner!);
    return 0;
  }
  ks.zrem(deadlines!, owner!);
  if (first === owner && ks.exists(lock!) === 0 && ks.zcard(queue!) > 0) ks.publish(channel!, 'released');
  return 1;
}

/** The read-write PRELUDE: expired readers and writer dropped; `settle` and `ttl` as in the Lua. */
function readWritePrelude(ks: MemoryKeyspace, hash: string, readers: string): { now: number; settle(): void; ttl(): number } {
  const now = ks.serverTimeMs();
  for (const reader of ks.zrangebyscore(readers, '-inf', now)) {
    ks.hdel(hash, `r:${reader}`, `t:${reader}`);
    ks.zrem(readers, reader);
  }
  const writerEnds = ks.hget(hash, 'wexp');
  if (writerEnds !== null && Number(writerEnds) <= now) ks.hdel(hash, 'writer', 'wholds', 'wtoken', 'wexp');
  return {
    now,
    settle() {
      const last = ks.zrange(readers, -1, -1, true);
      let ends = last.length > 0 ? Number(last[1]) : 0;
      const writer = ks.hget(hash, 'wexp');
      if (writer !== null) ends = Math.max(ends, Number(writer));
      if (ends <= now) {
        ks.del(hash, readers);
        return;
      }
      ks.pexpire(hash, ends - now);
      if (last.length > 0) ks.pexpire(readers, ends - now);
    },
    ttl() {
      const left = ks.pttl(hash);
      return left < 0 ? 1 : left;
    },
  };
}

function readAcquire(ks: MemoryKeyspace, [hash, readers, fence]: string[], [owner, lease]: string[]): [number, number] {
  const { now, settle, ttl } = readWritePrelude(ks, hash!, readers!);
  const writer = ks.hget(hash!, 'writer');
  if (writer !== null && writer !== owner) return [0, ttl()];
  const holds = ks.hincrby(hash!, `r:${owner}`, 1);
  let token: number;
  if (holds === 1) {
    token = nextToken(ks, fence!);
    ks.hset(hash!, `t:${owner}`, token);
  } else {
    token = Number(ks.hget(hash!, `t:${owner}`));
  }
  const ends = now + Number(lease);
  const current = ks.zscore(readers!, owner!);
  if (current === null || Number(current) < ends) ks.zadd(readers!, ends, owner!);
  settle();
  return [token, holds];
}

function writeAcquire(ks: MemoryKeyspace, [hash, readers, fence]: string[], [owner, lease]: string[]): [number, number] {
  const { now, settle, ttl } = readWritePrelude(ks, hash!, readers!);
  const writer = ks.hget(hash!, 'writer');
  const ends = now + Number(lease);
  if (writer === owner) {
    const holds = ks.hincrby(hash!, 'wholds', 1);
    if (Number(ks.hget(hash!, 'wexp')) < ends) ks.hset(hash!, 'wexp', ends);
    settle();
    return [Number(ks.hget(hash!, 'wtoken')), holds];
  }
  if (writer !== null) return [0, ttl()];
  if (ks.zcard(readers!) > 0) {
    if (ks.zscore(readers!, owner!) !== null) return [-3, 0];
    return [0, ttl()];
  }
  const token = nextToken(ks, fence!);
  ks.hset(hash!, 'writer', owner!, 'wholds', 1, 'wtoken', token, 'wexp', ends);
  settle();
  return [token, 1];
}

function readRenew(ks: MemoryKeyspace, [hash, readers]: string[], [owner, lease]: string[]): number {
  const { now, settle } = readWritePrelude(ks, hash!, readers!);
  if (ks.hexists(hash!, `r:${owner}`) === 0) return 0;
  const ends = now + Number(lease);
  if (Number(ks.zscore(readers!, owner!)) < ends) ks.zadd(readers!, ends, owner!);
  settle();
  return 1;
}

function writeRenew(ks: MemoryKeyspace, [hash, readers]: string[], [owner, lease]: string[]): number {
  const { now, settle } = readWritePrelude(ks, hash!, readers!);
  if (ks.hget(hash!, 'writer') !== owner) return 0;
  const ends = now + Number(lease);
  if (Number(ks.hget(hash!, 'wexp')) < ends) ks.hset(hash!, 'wexp', ends);
  settle();
  return 1;
}

function readRelease(ks: MemoryKeyspace, [hash, readers, channel]: string[], [owner, , count, expected]: string[]): number {
  const { settle } = readWritePrelude(ks, hash!, readers!);
  const field = `r:${owner}`;
  const holds = ks.hget(hash!, field);
  if (holds === null) {
    settle();
    return -1;
  }
  if (expected !== '' && holds !== expected) return -2;
  if (count !== 'all' && Number(holds) > 1) return ks.hincrby(hash!, field, -1);
  ks.hdel(hash!, field, `t:${owner}`);
  ks.zrem(readers!, owner!);
  if (ks.zcard(readers!) === 0) ks.publish(channel!, 'released');
  settle();
  return 0;
}

function writeRelease(ks: MemoryKeyspace, [hash, readers, channel]: string[], [owner, , count, expected]: string[]): number {
  const { settle } = readWritePrelude(ks, hash!, readers!);
  if (ks.hget(hash!, 'writer') !== owner) {
    settle();
    return -1;
  }
  const holds = ks.hget(hash!, 'wholds');
  if (expected !== '' && holds !== expected) return -2;
  if (count !== 'all' && Number(holds) > 1) return ks.hincrby(hash!, 'wholds', -1);
  ks.hdel(hash!, 'writer', 'wholds', 'wtoken', 'wexp');
  ks.publish(channel!, 'released');
  settle();
  return 0;
}

function readWriteAdjust(ks: MemoryKeyspace, [hash, readers]: string[], [owner, side, holds]: string[]): number {
  readWritePrelude(ks, hash!, readers!);
  if (side === 'read') {
    if (ks.hexists(hash!, `r:${owner}`) === 0) return 0;
    ks.hset(hash!, `r:${owner}`, holds!);
    return 1;
  }
  if (ks.hget(hash!, 'writer') !== owner) return 0;
  ks.hset(hash!, 'wholds', holds!);
  return 1;
}

function readWriteState(ks: MemoryKeyspace, [hash, readers]: string[], [owner]: string[]): number[] {
  const now = ks.serverTimeMs();
  const [writer, writerHolds, writerEnds, readHolds] = ks.hmget(hash!, 'writer', 'wholds', 'wexp', `r:${owner}`);
  const writerAlive = writer !== null && Number(writerEnds) > now;
  let wholds = 0;
  let mine = 0;
  if (writerAlive) {
    wholds = Number(writerHolds);
    if (writer === owner) mine = wholds;
  }
  const live = ks.zcount(readers!, `(${now}`, '+inf');
  let myRead = 0;
  const myEnd = ks.zscore(readers!, owner!);
  if (readHolds !== null && myEnd !== null && Number(myEnd) > now) myRead = Number(readHolds);
  return [wholds, live, ks.pttl(hash!), myRead, mine];
}

function readWriteForceUnlock(ks: MemoryKeyspace, [hash, readers, channel]: string[]): number {
  if (ks.del(hash!, readers!) > 0) {
    ks.publish(channel!, 'released');
    return 1;
  }
  return 0;
}

const TWINS: [AnyLockScript, MemoryScript][] = [
  [REENTRANT_ACQUIRE_SCRIPT, reentrantAcquire],
  [REENTRANT_RELEASE_SCRIPT, reentrantRelease],
  [REENTRANT_RENEW_SCRIPT, reentrantRenew],
  [REENTRANT_HANDOFF_SCRIPT, reentrantHandoff],
  [REENTRANT_UNMARK_SCRIPT, reentrantUnmark],
  [REENTRANT_ADJUST_SCRIPT, reentrantAdjust],
  [FORCE_UNLOCK_SCRIPT, forceUnlock],
  [FENCE_RAISE_SCRIPT, fenceRaise],
  [FAIR_ACQUIRE_SCRIPT, fairAcquire],
  [FAIR_LEAVE_SCRIPT, fairLeave],
  [READ_ACQUIRE_SCRIPT, readAcquire],
  [WRITE_ACQUIRE_SCRIPT, writeAcquire],
  [READ_RENEW_SCRIPT, readRenew],
  [WRITE_RENEW_SCRIPT, writeRenew],
  [READ_RELEASE_SCRIPT, readRelease],
  [WRITE_RELEASE_SCRIPT, writeRelease],
  [READ_WRITE_ADJUST_SCRIPT, readWriteAdjust],
  [READ_WRITE_STATE_SCRIPT, readWriteState],
  [READ_WRITE_FORCE_UNLOCK_SCRIPT, readWriteForceUnlock],
];

/** Every library script's twin, by its ioredis command name. */
export const MEMORY_SCRIPTS: ReadonlyMap<string, { script: AnyLockScript; run: MemoryScript }> = new Map(
  TWINS.map(([script, run]) => [script.name, { script, run }]),
);
