import type {
  LockAcquiredEvent,
  LockBackgroundErrorEvent,
  LockCircuitEvent,
  LockEventMap,
  LockEvents,
  LockFailedEvent,
  LockHandoverEvent,
  LockKind,
  LockLostEvent,
  LockReleasedEvent,
  LockRenewedEvent,
} from '../events/lock-events.js';
import type { LockMetricsOptions } from './lock-metrics.options.js';
import {
  loadGlobalMeterProvider,
  type CounterLike,
  type HistogramLike,
  type MeterLike,
  type MetricAttributes,
  type ObservableGaugeLike,
  type ObservableResultLike,
} from './open-telemetry-metrics.js';

/** The meter's name (the instrumentation scope) in every exporter. */
export const LOCK_METER_NAME = 'nestjs-distributed-lock';

/** What the gauges read when a metric reader collects (nothing is counted on the hot path for them). */
export interface LockMetricsSource {
  readonly events: LockEvents;
  /** Callers of this process waiting for a lock right now. */
  waiting(): number;
  /** Locks this process holds right now, by kind. */
  heldByKind(): ReadonlyMap<LockKind, number>;
  /** Each Redis node's circuit breaker right now (none when turned off). */
  circuits?(): readonly { node: string; state: LockCircuitEvent['state'] }[];
}

/** Seconds; from a millisecond to a minute, the range of lock waits and holds. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds; round trips of renewals, from half a millisecond to the operation timeout. */
const ROUND_TRIP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const LOCK_KINDS: readonly LockKind[] = ['reentrant', 'fair', 'read', 'write'];
/** Distinct lock names whose metricName label is remembered before the memo starts afresh. */
const LABEL_MEMO_SIZE = 1024;

/**
 * The library's OpenTelemetry instruments, fed by the client's events (the source of truth for what
 * happened to a lock) and, for the gauges, by the engine's own counts read at collection time.
 *
 * Started by the client when it connects, and only when there is something to record into: a
 * `meterProvider` given in the options, or one registered globally with `@opentelemetry/api`.
 * Otherwise no listener is attached, so the events cost what they cost without metrics (an emit
 * with nobody listening). Instrument names follow OpenTelemetry's conventions (durations in
 * seconds, the unit in the metadata); the Prometheus exporter writes them as
 * `distributed_lock_wait_duration_bucket{...}`, `distributed_lock_acquisitions_total{...}` etc.
 *
 * Attributes: `lock.kind`; `lock.outcome` (`acquired`, `timeout`, `aborted`, `error`; renewals
 * `renewed`, `failed`); `lock.hold.end` (`released`, `lost`); `lock.lost.reason`;
 * `lock.handover.to` (`local`, `process`); and `lock.name` only through the `metricName` option.
 * The circuit breaker's instruments carry `redis.node` (where: host:port or the client given) and
 * `circuit.state` (`open`, `half-open`, `closed`).
 */
export class LockMetrics {
  private readonly waitDuration: HistogramLike;
  private readonly holdDuration: HistogramLike;
  private readonly acquisitions: CounterLike;
  private readonly handovers: CounterLike;
  private readonly leasesLost: CounterLike;
  private readonly renewals: CounterLike;
  private readonly renewalDuration: HistogramLike;
  private readonly waiters: ObservableGaugeLike;
  private readonly held: ObservableGaugeLike;
  private readonly circuitChanges: CounterLike;
  private readonly circuitsOpen: ObservableGaugeLike;
  private readonly labels = new Map<string, string | undefined>();
  private readonly unsubscribe: (() => void)[] = [];

  /** Starts recording, or resolves undefined when there is no meter provider to record into. */
  static async start(options: LockMetricsOptions, source: LockMetricsSource): Promise<LockMetrics | undefined> {
    const provider = options.meterProvider ?? (await loadGlobalMeterProvider(LOCK_METER_NAME));
    return provider ? new LockMetrics(provider.getMeter(LOCK_METER_NAME), options, source) : undefined;
  }

  private constructor(
    meter: MeterLike,
    private readonly options: LockMetricsOptions,
    private readonly source: LockMetricsSource,
  ) {
    const seconds = (description: string, buckets: number[]) => ({ description, unit: 's', advice: { explicitBucketBoundaries: buckets } });
    this.waitDuration = meter.createHistogram(
      'distributed_lock.wait.duration',
      seconds('Time from a lock call to its outcome (granted, timed out, aborted, failed); reentrant acquisitions are not counted.', DURATION_BUCKETS),
    );
    this.holdDuration = meter.createHistogram(
      'distributed_lock.hold.duration',
      seconds('Time from acquiring a lock to its final release, or to losing it.', DURATION_BUCKETS),
    );
    this.acquisitions = meter.createCounter('distributed_lock.acquisitions', {
      description: 'Lock calls by outcome (reentrant acquisitions are not counted).',
    });
    this.handovers = meter.createCounter('distributed_lock.handovers', {
      description: 'Releases that gave the lock straight to a waiter: a caller of this process (local) or the process that has waited longest (process).',
    });
    this.leasesLost = meter.createCounter('distributed_lock.leases.lost', { description: 'Locks lost by their holder in this process, by reason.' });
    this.renewals = meter.createCounter('distributed_lock.renewals', { description: 'Watchdog renewals, by outcome.' });
    this.renewalDuration = meter.createHistogram(
      'distributed_lock.renewal.duration',
      seconds('Round trip of a successful watchdog renewal.', ROUND_TRIP_BUCKETS),
    );
    this.waiters = meter.createObservableGauge('distributed_lock.waiters', { description: 'Callers of this process waiting for a lock right now.' });
    this.held = meter.createObservableGauge('distributed_lock.held', { description: 'Locks held by this process right now, by kind.' });
    this.circuitChanges = meter.createCounter('distributed_lock.circuit.changes', {
      description: "Changes of a Redis node's circuit breaker, by the state entered (open: calls refused at once; half-open: a probe; closed).",
    });
    this.circuitsOpen = meter.createObservableGauge('distributed_lock.circuit.open', {
      description: "1 while a Redis node's circuit breaker refuses calls (open or half-open), else 0; per node.",
    });
    this.waiters.addCallback(this.observeWaiters);
    this.held.addCallback(this.observeHeld);
    this.circuitsOpen.addCallback(this.observeCircuits);
    this.listen('circuit', (event: LockCircuitEvent) => this.circuitChanges.add(1, { 'redis.node': event.node, 'circuit.state': event.state }));
    this.listen('acquired', (event: LockAcquiredEvent) => {
      if (event.reentrant) return;
      const attributes = this.attributes(event, { 'lock.outcome': 'acquired' });
      this.waitDuration.record(event.waitedMs / 1000, attributes);
      this.acquisitions.add(1, attributes);
    });
    this.listen('failed', (event: LockFailedEvent) => {
      const attributes = this.attributes(event, { 'lock.outcome': event.outcome });
      this.waitDuration.record(event.waitedMs / 1000, attributes);
      this.acquisitions.add(1, attributes);
    });
    this.listen('released', (event: LockReleasedEvent) =>
      this.holdDuration.record(event.heldMs / 1000, this.attributes(event, { 'lock.hold.end': 'released' })),
    );
    this.listen('lost', (event: LockLostEvent) => {
      this.holdDuration.record(event.heldMs / 1000, this.attributes(event, { 'lock.hold.end': 'lost' }));
      this.leasesLost.add(1, this.attributes(event, { 'lock.lost.reason': event.reason }));
    });
    this.listen('handover', (event: LockHandoverEvent) => this.handovers.add(1, this.attributes(event, { 'lock.handover.to': event.to })));
    this.listen('renewed', (event: LockRenewedEvent) => {
      this.renewals.add(1, this.attributes(event, { 'lock.outcome': 'renewed' }));
      this.renewalDuration.record(event.tookMs / 1000, this.attributes(event, {}));
    });
    this.listen('background-error', (event: LockBackgroundErrorEvent) => {
      if (event.operation !== 'renew') return;
      const name = event.name === undefined ? undefined : this.label(event.name);
      this.renewals.add(1, name === undefined ? { 'lock.outcome': 'failed' } : { 'lock.outcome': 'failed', 'lock.name': name });
    });
  }

  /** Stops recording: listeners and gauge callbacks are removed (the client is closing). */
  stop(): void {
    for (const unsubscribe of this.unsubscribe.splice(0)) unsubscribe();
    this.waiters.removeCallback(this.observeWaiters);
    this.held.removeCallback(this.observeHeld);
    this.circuitsOpen.removeCallback(this.observeCircuits);
  }

  private readonly observeCircuits = (result: ObservableResultLike): void => {
    for (const { node, state } of this.source.circuits?.() ?? []) result.observe(state === 'closed' ? 0 : 1, { 'redis.node': node });
  };

  private readonly observeWaiters = (result: ObservableResultLike): void => result.observe(this.source.waiting());

  /** Every kind, 0 included, so that a series does not vanish when nothing of its kind is held. */
  private readonly observeHeld = (result: ObservableResultLike): void => {
    const held = this.source.heldByKind();
    for (const kind of LOCK_KINDS) result.observe(held.get(kind) ?? 0, { 'lock.kind': kind });
  };

  private listen<E extends keyof LockEventMap>(event: E, listener: (...args: LockEventMap[E]) => void): void {
    const { events } = this.source;
    events.on(event, listener as never);
    this.unsubscribe.push(() => events.off(event, listener as never));
  }

  private attributes(event: { name: string; kind: LockKind }, extra: MetricAttributes): MetricAttributes {
    const name = this.label(event.name);
    return name === undefined ? { 'lock.kind': event.kind, ...extra } : { 'lock.kind': event.kind, 'lock.name': name, ...extra };
  }

  /** The bounded label of a lock name (metricName), remembered for the hottest names. */
  private label(name: string): string | undefined {
    const { metricName } = this.options;
    if (!metricName) return undefined;
    if (this.labels.has(name)) return this.labels.get(name);
    if (this.labels.size >= LABEL_MEMO_SIZE) this.labels.clear();
    let label: string | undefined;
    try {
      label = metricName(name);
    } catch {
      label = undefined; // a mapping that throws must not break the lock call that emitted the event
    }
    this.labels.set(name, label);
    return label;
  }
}
