import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { describe, toMilliseconds } from '../util/duration.js';
import { assertKnownKeys, isPlainObject } from '../util/validate.js';
import { DEFAULT_REPLICA_ACK_TIMEOUT_MS } from './lock-client-options.js';

/** Replica acknowledgement, validated: `WAIT replicas timeoutMs`. */
export interface ReplicaAck {
  replicas: number;
  timeoutMs: number;
}

const MAX_REPLICAS = 64;

/**
 * `false`/undefined -> off; `{ replicas, timeout? }` -> on. Throws InvalidLockArgumentError naming
 * `setting`; the module turns it into a configuration error.
 */
export function parseReplicaAck(value: unknown, setting: string): ReplicaAck | undefined {
  if (value === undefined || value === false) return undefined;
  if (!isPlainObject(value)) {
    throw new InvalidLockArgumentError(setting, `expected { replicas, timeout? } or false, got ${describe(value)}.`);
  }
  assertKnownKeys(value, ['replicas', 'timeout'], setting);
  const replicas = value.replicas;
  if (!Number.isInteger(replicas) || (replicas as number) < 1 || (replicas as number) > MAX_REPLICAS) {
    throw new InvalidLockArgumentError(`${setting}.replicas`, `expected an integer from 1 to ${MAX_REPLICAS}, got ${describe(replicas)}.`);
  }
  const timeoutMs = value.timeout === undefined ? DEFAULT_REPLICA_ACK_TIMEOUT_MS : toMilliseconds(value.timeout, `${setting}.timeout`, { min: 1 });
  return { replicas: replicas as number, timeoutMs };
}

/** From DISTRIBUTED_LOCK_REPLICA_ACK (a replica count; 0 = off) and DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT. */
export function replicaAckFromEnv(env: Record<string, string | undefined>): ReplicaAck | undefined {
  const count = env.DISTRIBUTED_LOCK_REPLICA_ACK?.trim();
  if (!count || count === '0') return undefined;
  const replicas = Number(count);
  if (!Number.isInteger(replicas)) {
    throw new InvalidLockArgumentError('DISTRIBUTED_LOCK_REPLICA_ACK', `expected a number of replicas (0 = off), got "${count}".`);
  }
  const timeout = env.DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT?.trim();
  return parseReplicaAck(timeout ? { replicas, timeout } : { replicas }, 'DISTRIBUTED_LOCK_REPLICA_ACK');
}
