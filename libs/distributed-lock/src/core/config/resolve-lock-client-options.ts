import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { DistributedLockError } from '../errors/distributed-lock.error.js';
import type { ConnectionConfig } from './connection-config.js';
import { lockClientPortOf } from '../redis/client-kind.js';
import type { RedisPort } from '../redis/redis-port.js';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../util/clock.js';
import { describe, toMilliseconds } from '../util/duration.js';
import { isPlainObject } from '../util/validate.js';
import { resolveMetricsOptions, type LockMetricsOptions } from '../metrics/lock-metrics.options.js';
import { validateConnectionConfig } from './connection-config.validator.js';
import { readConnectionConfigFromEnv, type Environment } from './env-config.parser.js';
import { parseReplicaAck, replicaAckFromEnv, type ReplicaAck } from './replica-ack.js';
import { parseBoolean } from './env-parsers.js';
import {
  DEFAULT_CIRCUIT_FAILURES,
  DEFAULT_CIRCUIT_RESET_AFTER_MS,
  DEFAULT_HANDOVER_TURN_MS,
  DEFAULT_KEY_PREFIX,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_WATCHDOG_TIMEOUT_MS,
  LOCK_CLIENT_OPTION_KEYS,
  MIN_WATCHDOG_TIMEOUT_MS,
  type LockClientOptions,
} from './lock-client-options.js';

export interface ResolvedLockClientOptions {
  /** Set when the library creates its own connections (validated; see connection/create-connection-strategy.ts). */
  connection: ConnectionConfig | undefined;
  /**
   * Set when the user brought a client: the port over it (its kind told by redisClientKind), or, for
   * an array of clients (RedLock over independent masters), one port per client.
   */
  clients: RedisPort[] | undefined;
  keyPrefix: string;
  /** Asked for by the option or DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT (a cluster client keeps one slot per script anyway). */
  oneSlotPerScript: boolean;
  watchdogTimeoutMs: number;
  operationTimeoutMs: number;
  lazyConnect: boolean;
  /** Each node's circuit breaker (see LockClientOptions.circuitBreaker), or false: off. */
  circuitBreaker: { failures: number; resetAfterMs: number } | false;
  replicaAck: ReplicaAck | undefined;
  handoverTurnMs: number;
  /** False: no metrics; else recorded if a meter provider is there at connect time. */
  metrics: LockMetricsOptions | false;
  instanceName: string | undefined;
  clock: Clock;
  clientId: string;
}

const MAX_PREFIX_LENGTH = 128;
const MAX_CLIENT_ID_LENGTH = 64;
const CLOCK_METHODS = ['now', 'wallNow', 'setTimer', 'soon', 'keepAlive'] as const;
const MAX_INSTANCE_NAME_LENGTH = 128;

/**
 * Validates options and fills the gaps from the environment, then from defaults. Everything wrong is
 * reported here, at start-up, naming the option or the variable.
 */
export function resolveLockClientOptions(input: LockClientOptions, extraKeys: readonly string[] = []): ResolvedLockClientOptions {
  if (!isPlainObject(input)) {
    throw new InvalidLockConfigError('options', `expected an object, got ${describe(input)}.`);
  }
  const options: LockClientOptions = input;
  for (const key of Object.keys(options)) {
    if (!(LOCK_CLIENT_OPTION_KEYS as readonly string[]).includes(key) && !extraKeys.includes(key)) {
      throw new InvalidLockConfigError(key, `is not an option; known options are ${[...LOCK_CLIENT_OPTION_KEYS, ...extraKeys].join(', ')}.`);
    }
  }
  const env: Environment = options.env ?? process.env;
  if (options.client !== undefined && options.connection !== undefined) {
    throw new InvalidLockConfigError('client', 'give either an existing client or connection settings, not both.');
  }
  const operationTimeoutMs = configDuration(options.operationTimeout, 'operationTimeout', undefined, undefined, DEFAULT_OPERATION_TIMEOUT_MS, 1);
  // An ioredis client (or a fork, or the in-memory store, which answer ioredis' API), a node-redis one, or GLIDE settings.
  const clients = options.client === undefined ? undefined : clientPorts(options.client, operationTimeoutMs);
  const connection =
    clients !== undefined ? undefined : options.connection !== undefined ? validateConnectionConfig(options.connection) : readConnectionConfigFromEnv(env);

  const keyPrefix = options.keyPrefix ?? env.DISTRIBUTED_LOCK_KEY_PREFIX ?? DEFAULT_KEY_PREFIX;
  const prefixSetting = options.keyPrefix !== undefined ? 'keyPrefix' : 'DISTRIBUTED_LOCK_KEY_PREFIX';
  if (typeof keyPrefix !== 'string' || keyPrefix.length > MAX_PREFIX_LENGTH || /[{}\s]/.test(keyPrefix)) {
    throw new InvalidLockConfigError(
      prefixSetting,
      `expected up to ${MAX_PREFIX_LENGTH} characters without braces or spaces, e.g. "lock:", got ${describe(keyPrefix)}.`,
    );
  }

  const replicaAck = asConfigError(() => (options.replicaAck !== undefined ? parseReplicaAck(options.replicaAck, 'replicaAck') : replicaAckFromEnv(env)));
  if (replicaAck && (connection?.mode === 'redlock' || (clients?.length ?? 0) > 1)) {
    throw new InvalidLockConfigError(
      options.replicaAck !== undefined ? 'replicaAck' : 'DISTRIBUTED_LOCK_REPLICA_ACK',
      'replica acknowledgement does not apply to redlock mode: its nodes are independent masters. Unset it, or use a replicated mode.',
    );
  }

  return {
    connection,
    clients,
    replicaAck,
    keyPrefix,
    oneSlotPerScript: resolveOneSlotPerScript(options.oneSlotPerScript, env),
    watchdogTimeoutMs: configDuration(
      options.watchdogTimeout,
      'watchdogTimeout',
      env,
      'DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT',
      DEFAULT_WATCHDOG_TIMEOUT_MS,
      MIN_WATCHDOG_TIMEOUT_MS,
    ),
    operationTimeoutMs,
    lazyConnect: options.lazyConnect ?? false,
    circuitBreaker: resolveCircuitBreaker(options.circuitBreaker),
    handoverTurnMs: configDuration(options.handoverTurn, 'handoverTurn', undefined, undefined, DEFAULT_HANDOVER_TURN_MS, 0),
    metrics: resolveMetricsOptions(options.metrics),
    instanceName: resolveInstanceName(options.instanceName, env),
    clock: resolveClock(options.clock),
    clientId: resolveClientId(options.clientId),
  };
}

/** The port of the client given, or of each client of an array (RedLock over independent masters: at least 3). */
function clientPorts(client: unknown, operationTimeoutMs: number): RedisPort[] {
  if (!Array.isArray(client)) return [lockClientPortOf(client, operationTimeoutMs)];
  if (client.length < 3) {
    throw new InvalidLockConfigError(
      'client',
      `an array of clients is RedLock over independent masters, which needs at least 3 (a majority must survive one down); got ${client.length}. Pass one client for one Redis.`,
    );
  }
  return client.map((each: unknown) => lockClientPortOf(each, operationTimeoutMs));
}

function resolveClock(value: unknown): Clock {
  if (value === undefined) return systemClock;
  const missing = isPlainObjectOrInstance(value)
    ? CLOCK_METHODS.filter((method) => typeof (value as Record<string, unknown>)[method] !== 'function')
    : CLOCK_METHODS;
  if (missing.length > 0) {
    throw new InvalidLockConfigError('clock', `expected a Clock (${CLOCK_METHODS.join(', ')}), got ${describe(value)} without ${missing.join(', ')}.`);
  }
  return value as Clock;
}

function isPlainObjectOrInstance(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function resolveClientId(value: unknown): string {
  if (value === undefined) return randomUUID();
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(value) || value.length > MAX_CLIENT_ID_LENGTH) {
    throw new InvalidLockConfigError(
      'clientId',
      `expected 1 to ${MAX_CLIENT_ID_LENGTH} letters, digits, '.', '_' or '-' (it is the first part of owner ids, before a ':'), got ${describe(value)}.`,
    );
  }
  return value;
}

/** The circuit breaker's settings: the option's, with defaults for what it leaves out; false: off. */
function resolveCircuitBreaker(value: unknown): { failures: number; resetAfterMs: number } | false {
  if (value === false) return false;
  if (value === undefined) return { failures: DEFAULT_CIRCUIT_FAILURES, resetAfterMs: DEFAULT_CIRCUIT_RESET_AFTER_MS };
  if (!isPlainObject(value)) {
    throw new InvalidLockConfigError('circuitBreaker', `expected { failures, resetAfter } or false, got ${describe(value)}.`);
  }
  const unknown = Object.keys(value).filter((key) => key !== 'failures' && key !== 'resetAfter');
  if (unknown.length > 0) throw new InvalidLockConfigError('circuitBreaker', `has no option ${unknown.join(', ')}; its options are failures and resetAfter.`);
  const { failures = DEFAULT_CIRCUIT_FAILURES } = value as { failures?: unknown };
  if (typeof failures !== 'number' || !Number.isInteger(failures) || failures < 1) {
    throw new InvalidLockConfigError('circuitBreaker.failures', `expected a whole number of failures, at least 1, got ${describe(failures)}.`);
  }
  const resetAfterMs = configDuration(value.resetAfter, 'circuitBreaker.resetAfter', undefined, undefined, DEFAULT_CIRCUIT_RESET_AFTER_MS, 1);
  return { failures, resetAfterMs };
}

/** Whether every script's keys must share one slot: the option, else DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT, else false. */
function resolveOneSlotPerScript(value: unknown, env: Environment): boolean {
  if (value !== undefined) {
    if (typeof value !== 'boolean') throw new InvalidLockConfigError('oneSlotPerScript', `expected true or false, got ${describe(value)}.`);
    return value;
  }
  const variable = env.DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT;
  return variable === undefined ? false : parseBoolean(variable, 'DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT');
}

/** The readable name of this process in lock inspection: the option, else DISTRIBUTED_LOCK_INSTANCE_NAME. */
function resolveInstanceName(value: unknown, env: Environment): string | undefined {
  const setting = value !== undefined ? 'instanceName' : 'DISTRIBUTED_LOCK_INSTANCE_NAME';
  const name = value !== undefined ? value : env.DISTRIBUTED_LOCK_INSTANCE_NAME?.trim() || undefined;
  if (name === undefined) return undefined;
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_INSTANCE_NAME_LENGTH) {
    throw new InvalidLockConfigError(setting, `expected a name of 1 to ${MAX_INSTANCE_NAME_LENGTH} characters, e.g. "orders-api-1", got ${describe(name)}.`);
  }
  return name;
}

/** Runs `parse`, turning an argument error into a configuration error that names the same setting. */
function asConfigError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof DistributedLockError && 'argument' in error) {
      throw new InvalidLockConfigError(String((error as { argument: string }).argument), error.message.replace(/^Invalid [^:]+: /, ''));
    }
    throw error;
  }
}

/** A duration from an option, else an environment variable, else a default; errors name the source. */
export function configDuration(
  value: unknown,
  option: string,
  env: Environment | undefined,
  variable: string | undefined,
  fallback: number,
  min: number,
): number {
  const fromEnv = variable !== undefined && env?.[variable]?.trim() ? env[variable]!.trim() : undefined;
  const source = value !== undefined ? option : fromEnv !== undefined ? variable! : undefined;
  if (source === undefined) return fallback;
  try {
    return toMilliseconds(value !== undefined ? value : fromEnv, source, { min });
  } catch (error) {
    if (error instanceof DistributedLockError) throw new InvalidLockConfigError(source, error.message.replace(/^Invalid [^:]+: /, ''));
    throw error;
  }
}
