/**
 * The part of the OpenTelemetry metrics API the library uses, typed structurally so that neither the
 * library's code nor its type declarations depend on `@opentelemetry/api` (an optional peer): with it
 * installed, `loadGlobalMeterProvider` returns the provider the application registered; without it,
 * or with no provider registered, there are no metrics and no cost (see LockMetrics).
 */

export type MetricAttributes = Record<string, string>;

export interface CounterLike {
  add(value: number, attributes?: MetricAttributes): void;
}

export interface HistogramLike {
  record(value: number, attributes?: MetricAttributes): void;
}

export interface ObservableResultLike {
  observe(value: number, attributes?: MetricAttributes): void;
}

export interface ObservableGaugeLike {
  addCallback(callback: (result: ObservableResultLike) => void): void;
  removeCallback(callback: (result: ObservableResultLike) => void): void;
}

export interface InstrumentOptions {
  description?: string;
  unit?: string;
  /** Histogram bucket boundaries (the API's MetricAdvice, 1.7+; older SDKs ignore it). */
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface MeterLike {
  createCounter(name: string, options?: InstrumentOptions): CounterLike;
  createHistogram(name: string, options?: InstrumentOptions): HistogramLike;
  createObservableGauge(name: string, options?: InstrumentOptions): ObservableGaugeLike;
}

/** An OpenTelemetry MeterProvider (the SDK's, or any object with `getMeter`). */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): MeterLike;
}

interface MetricsApiLike {
  metrics: { getMeterProvider(): MeterProviderLike };
  createNoopMeter(): MeterLike;
}

/** A variable, so that TypeScript and bundlers do not try to resolve the optional package. */
const OTEL_API = '@opentelemetry/api';

/**
 * The meter provider registered globally with `@opentelemetry/api` (`metrics.setGlobalMeterProvider`,
 * which the SDKs call), or undefined when the package is not installed, is older than 1.3 (no metrics
 * API), or no provider is registered: its meter is then the API's no-op meter, and the library does
 * not even listen to its events.
 */
export async function loadGlobalMeterProvider(meterName: string): Promise<MeterProviderLike | undefined> {
  let api: MetricsApiLike;
  try {
    const loaded = (await import(OTEL_API)) as Partial<MetricsApiLike> & { default?: MetricsApiLike };
    api = (loaded.metrics ? loaded : loaded.default) as MetricsApiLike;
    if (!api?.metrics || typeof api.createNoopMeter !== 'function') return undefined;
  } catch {
    return undefined; // not installed: no metrics
  }
  const provider = api.metrics.getMeterProvider();
  const noop = api.createNoopMeter();
  return provider.getMeter(meterName).constructor === noop.constructor ? undefined : provider;
}
