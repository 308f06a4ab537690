import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { describe } from '../util/duration.js';
import { isPlainObject } from '../util/validate.js';
import type { MeterProviderLike } from './open-telemetry-metrics.js';

/** Options of the OpenTelemetry metrics (`metrics` in the client and module options). */
export interface LockMetricsOptions {
  /**
   * Maps a lock name to a bounded label, recorded as the `lock.name` attribute (e.g.
   * `(name) => name.replace(/:.*$/, ':*')` turns `product:42` into `product:*`); undefined records no
   * name. Default: no name at all, since lock names are usually unbounded (one per product, order...)
   * and every distinct attribute value is a time series of its own.
   */
  metricName?: (name: string) => string | undefined;
  /**
   * The MeterProvider to record with (an in-test provider, or one of several). Default: the one
   * registered globally with `@opentelemetry/api`, as the SDKs do, when the client connects.
   */
  meterProvider?: MeterProviderLike;
}

const KEYS = ['metricName', 'meterProvider'] as const;

/** Checks the `metrics` option: an options object, or false for no metrics even with a provider registered. */
export function resolveMetricsOptions(value: unknown): LockMetricsOptions | false {
  if (value === undefined) return {};
  if (value === false) return false;
  if (!isPlainObject(value)) throw new InvalidLockConfigError('metrics', `expected an options object or false, got ${describe(value)}.`);
  const unknown = Object.keys(value).find((key) => !(KEYS as readonly string[]).includes(key));
  if (unknown !== undefined) throw new InvalidLockConfigError('metrics', `"${unknown}" is not an option; known options are ${KEYS.join(', ')}.`);
  if (value.metricName !== undefined && typeof value.metricName !== 'function') {
    throw new InvalidLockConfigError('metrics.metricName', `expected a function (name) => label, got ${describe(value.metricName)}.`);
  }
  if (value.meterProvider !== undefined && typeof (value.meterProvider as { getMeter?: unknown })?.getMeter !== 'function') {
    throw new InvalidLockConfigError('metrics.meterProvider', 'expected an OpenTelemetry MeterProvider (an object with getMeter).');
  }
  return value as LockMetricsOptions;
}
