import { InvalidLockArgumentError } from '../errors/invalid-lock-argument.error.js';
import type { FencedCommand } from './fenced-ops.script.js';
import { describe, toMilliseconds, type Duration } from '../util/duration.js';

/** A value Redis stores as a string. */
export type FencedValue = string | number;

/** The operations of one fenced call, encoded for the script (see fenced-ops.script.ts). */
export class FencedOperations {
  readonly keys: string[] = [];
  readonly ops: (string | number)[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(command: FencedCommand, key: string, args: readonly FencedValue[] = []): void {
    if (typeof key !== 'string' || key === '')
      throw new InvalidLockArgumentError(`fenced ${command} key`, `expected a non-empty string, got ${describe(key)}.`);
    for (const arg of args) {
      if (typeof arg !== 'string' && !(typeof arg === 'number' && Number.isFinite(arg))) {
        throw new InvalidLockArgumentError(`fenced ${command} value`, `expected a string or a finite number, got ${describe(arg)}.`);
      }
    }
    let position = this.keys.indexOf(key);
    if (position < 0) position = this.keys.push(key) - 1;
    this.ops.push(command, position + 1, args.length, ...args);
    this.count += 1;
  }
}

/**
 * Several fenced commands run as one step (one script): all refused, with nothing changed, when the
 * token is stale; otherwise all run, in order, and `exec()` resolves their replies. Build it with
 * `FencedResource.batch(token)`. A command that fails (INCRBY on text) stops the batch without undoing
 * the ones before it, as in MULTI/EXEC.
 */
export class FencedBatch {
  private readonly operations = new FencedOperations();

  /** @internal Made by FencedResource.batch. */
  constructor(private readonly run: (operations: FencedOperations) => Promise<unknown[]>) {}

  /** Reads `key` (null when missing). */
  get(key: string): this {
    this.operations.add('get', key);
    return this;
  }

  /** Sets `key`; with `ttl` (a Duration, as every duration of the library), it expires after it (SET PX). */
  set(key: string, value: FencedValue, options: { ttl?: Duration } = {}): this {
    this.operations.add('set', key, options.ttl === undefined ? [value] : [value, 'PX', toMilliseconds(options.ttl, 'fenced set ttl', { min: 1 })]);
    return this;
  }

  /** Adds `by` (an integer) to `key`; replies the new value. */
  incrby(key: string, by: number): this {
    this.operations.add('incrby', key, [integer(by, 'fenced incrby amount')]);
    return this;
  }

  /** Sets hash fields; replies how many were new. */
  hset(key: string, fields: Readonly<Record<string, FencedValue>>): this {
    const pairs = Object.entries(fields ?? {}).flat();
    if (pairs.length === 0) throw new InvalidLockArgumentError('fenced hset fields', 'give at least one field.');
    this.operations.add('hset', key, pairs);
    return this;
  }

  /** Deletes `key`; replies 1 if it existed. */
  del(key: string): this {
    this.operations.add('del', key);
    return this;
  }

  /** Appends values to a list; replies its new length. */
  rpush(key: string, ...values: FencedValue[]): this {
    if (values.length === 0) throw new InvalidLockArgumentError('fenced rpush values', 'give at least one value.');
    this.operations.add('rpush', key, values);
    return this;
  }

  /** Runs the batch: each command's reply, in order; StaleTokenError if the token is stale. */
  exec(): Promise<unknown[]> {
    if (this.operations.size === 0) throw new InvalidLockArgumentError('fenced batch', 'add at least one command before exec().');
    return this.run(this.operations);
  }
}

function integer(value: unknown, argument: string): number {
  if (!Number.isSafeInteger(value)) throw new InvalidLockArgumentError(argument, `expected an integer, got ${describe(value)}.`);
  return value as number;
}
