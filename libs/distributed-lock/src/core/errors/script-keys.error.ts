import { DistributedLockError } from './distributed-lock.error.js';

/**
 * The in-memory store's strict-keys mode refused a Lua script, as a managed service would: it touched
 * a key it did not declare in KEYS (Dragonfly by default, ElastiCache), or declared keys of two
 * cluster slots (ElastiCache Serverless, Redis Cluster, sharding proxies). Only the in-memory store of
 * `nestjs-distributed-lock/testing` throws it, and only with `strictKeys` on.
 */
export class ScriptKeysError extends DistributedLockError {
  readonly code = 'LOCK_SCRIPT_KEYS' as const;

  constructor(
    /** What was wrong: a key used without being declared, declared keys in two slots, or no key declared ('one-slot'). */
    readonly reason: 'undeclared-key' | 'cross-slot' | 'no-keys',
    /** The script's name (see util/script-names.ts), else its SHA1. */
    readonly script: string,
    /** The key at fault: the undeclared one, or the first declared key of a second slot ('' for no-keys). */
    readonly key: string,
    message: string,
  ) {
    super(message);
  }
}
