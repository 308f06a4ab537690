/**
 * Optional OpenTelemetry spans for decorated calls, without a dependency on @opentelemetry/api: the
 * package is imported dynamically when the application starts, and when it is not installed there
 * are no spans and no cost. Only the parts of the API used here are typed (structurally), so the
 * library's type declarations never mention the package.
 */
import { LockAcquireAbortedError, LockAcquireTimeoutError, type Clock } from '../core/index.js';

type AttributeValue = string | number | boolean;

interface SpanLike {
  isRecording(): boolean;
  setAttributes(attributes: Record<string, AttributeValue>): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

interface OpenTelemetryApi {
  trace: {
    getTracer(name: string, version?: string): { startSpan(name: string, options?: { attributes?: Record<string, AttributeValue> }): SpanLike };
    setSpan(context: unknown, span: SpanLike): unknown;
  };
  context: { active(): unknown; with<T>(context: unknown, fn: () => T): T };
  SpanStatusCode: { ERROR: number; OK: number };
}

export type AcquireOutcome = 'acquired' | 'timeout' | 'aborted' | 'error';

const TRACER_NAME = 'nestjs-distributed-lock';
/** A variable, so that TypeScript and bundlers do not try to resolve the optional package. */
const OTEL_API = '@opentelemetry/api';

export interface LockTracing {
  /** Runs `acquire` inside a `lock.acquire` span (the active span while it runs) and ends the span with its outcome. */
  traceAcquire<T>(name: string, kind: string, acquire: () => Promise<T>): Promise<T>;
}

/** Loads @opentelemetry/api if it is installed; undefined otherwise. */
export async function loadLockTracing(clock: Clock): Promise<LockTracing | undefined> {
  let api: OpenTelemetryApi;
  try {
    const loaded = (await import(OTEL_API)) as Partial<OpenTelemetryApi> & { default?: OpenTelemetryApi };
    api = (loaded.trace ? loaded : loaded.default) as OpenTelemetryApi;
    if (!api?.trace || !api.context) return undefined;
  } catch {
    return undefined; // not installed: no spans
  }
  return {
    async traceAcquire(name, kind, acquire) {
      // Asked per call: a tracer provider registered after start-up (e.g. by a test) is used.
      const span = api.trace.getTracer(TRACER_NAME).startSpan('lock.acquire', { attributes: { 'lock.name': name, 'lock.kind': kind } });
      if (!span.isRecording()) {
        // No SDK registered (or this span is sampled out): nothing would be exported, skip the bookkeeping.
        span.end();
        return acquire();
      }
      const startedAt = clock.now();
      const finish = (outcome: AcquireOutcome, error?: unknown): void => {
        span.setAttributes({ 'lock.outcome': outcome, 'lock.waited_ms': Math.round(clock.now() - startedAt) });
        if (outcome === 'error') span.setStatus({ code: api.SpanStatusCode.ERROR, message: (error as Error)?.message });
        span.end();
      };
      try {
        const result = await api.context.with(api.trace.setSpan(api.context.active(), span), acquire);
        finish('acquired');
        return result;
      } catch (error) {
        finish(outcomeOf(error), error);
        throw error;
      }
    },
  };
}

function outcomeOf(error: unknown): AcquireOutcome {
  if (error instanceof LockAcquireTimeoutError) return 'timeout';
  if (error instanceof LockAcquireAbortedError) return 'aborted';
  return 'error';
}
