import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import { describe } from './duration.js';

/** Longest accepted lock name, in characters. Keys are built from it, and Redis keys should stay short. */
export const MAX_LOCK_NAME_LENGTH = 512;

/**
 * Lock names become part of Redis keys: `<prefix>{<name>}`. Braces are refused because they would
 * change the cluster hash tag, and with it the guarantee that a lock's keys share one slot.
 */
export function assertLockName(name: unknown, argument = 'lock name'): asserts name is string {
  if (typeof name !== 'string') {
    throw new InvalidLockArgumentError(argument, `expected a non-empty string, got ${describe(name)}.`);
  }
  if (name.trim().length === 0) {
    throw new InvalidLockArgumentError(argument, `it is empty or whitespace; build names from the resource, e.g. 'product:42'.`);
  }
  if (name.length > MAX_LOCK_NAME_LENGTH) {
    throw new InvalidLockArgumentError(argument, `it has ${name.length} characters; the maximum is ${MAX_LOCK_NAME_LENGTH}.`);
  }
  if (name.includes('{') || name.includes('}')) {
    throw new InvalidLockArgumentError(argument, `"${name}" contains '{' or '}', which are reserved for the Redis hash tag.`);
  }
}

/** Rejects option keys that the callee does not know (typos such as `leasetime`). */
export function assertKnownKeys(options: object, known: readonly string[], argument: string): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new InvalidLockArgumentError(argument, `unknown option "${key}"; known options are ${known.join(', ')}.`);
    }
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
