import type { RedisMode } from './config/connection-config.js';
import type { LockClientOptions } from './config/lock-client-options.js';
import { resolveLockClientOptions } from './config/resolve-lock-client-options.js';
import { LockConnections } from './connection/lock-connections.js';
import { LockEngine } from './engine/lock-engine.js';
import { LockEvents } from './events/lock-events.js';
import { LOCK_INSPECTION, LOCK_SCRIPT_BATCH } from './lock-scripts.js';
import { ClientMetrics } from './metrics/client-metrics.js';
import type { PubSubPort, RedisPort } from './redis/redis-port.js';
import { LockLines } from './waiting/lock-lines.js';

/** The connections a health check looks at: where lock scripts run, and the subscribers of unlock notifications. */
export interface HealthTargets {
  commands: { target: string; client: RedisPort }[];
  subscribers: { target: string; client: PubSubPort }[];
}

/** What a client is doing right now (see LockClient.stats). */
export interface LockClientStats {
  held: number;
  renewing: number;
  waitingChannels: number;
}

/** One Redis node's circuit breaker, as `LockClient.circuits()` reports it (see LockClientOptions.circuitBreaker). */
export interface LockCircuitStatus {
  /** The node (host:port, or the client given; no credentials). */
  node: string;
  /** `closed`: calls are sent; `open`: refused at once; `half-open`: refused while a probe asks the node. */
  state: 'closed' | 'open' | 'half-open';
  /** Calls in a row that got no reply (0 after any reply). */
  failures: number;
  /** When it last changed state (ms since the epoch; the client's start if never). */
  since: number;
}

/**
 * The composition root of a LockClient, and the order its parts start and stop in. The constructor
 * validates the options (InvalidLockConfigError), prepares the connections, builds the engine over
 * their nodes and this process's lock lines, and the metrics, and wires what a command connection
 * that is ready again sets going: each part is built from parts built before it, so nothing reaches
 * a part that does not exist yet. `connect()` and `close()` are LockClient's.
 */
export class LockClientParts {
  readonly events = new LockEvents();
  /** The client's connections, prepared (connect() opens them). */
  readonly connections: LockConnections;
  /** What the client's lock objects run on (their LockRuntime). */
  readonly engine: LockEngine;
  readonly target: string;
  readonly mode: RedisMode | 'client';
  /** OpenTelemetry metrics: started by connect() when a meter provider is there, stopped by close(). */
  private readonly metrics: ClientMetrics;
  private readonly lazyConnect: boolean;
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: LockClientOptions, extraOptionKeys: readonly string[]) {
    const resolved = resolveLockClientOptions(options, extraOptionKeys);
    const { events } = this;
    const connections = new LockConnections(resolved, events);
    const { clientId, clock } = resolved;
    const nodes = connections.lockNodes(resolved.operationTimeoutMs, LOCK_SCRIPT_BATCH, resolved.oneSlotPerScript, resolved.circuitBreaker);
    const lines = new LockLines(connections.subscriberPort(), events, clock, clientId, resolved.handoverTurnMs);
    const engine = new LockEngine({
      clientId,
      nodes,
      lines,
      events,
      clock,
      keyPrefix: resolved.keyPrefix,
      watchdogTimeoutMs: resolved.watchdogTimeoutMs,
      operationTimeoutMs: resolved.operationTimeoutMs,
      replicaAck: resolved.replicaAck,
      pubsub: connections.pubsub,
      oneSlotPerScript: resolved.oneSlotPerScript,
      instanceName: resolved.instanceName,
      staleReaders: connections.replicaReaders,
      inspection: LOCK_INSPECTION,
    });
    connections.onCommandReady(() => {
      // Waiters whose attempts failed while a command connection was down look again as soon as it is back.
      lines.wakeAll();
      // A new connection may lead to another server (a failover): its clock is read again (see NodeClock);
      // an open circuit breaker probes it at once rather than refusing calls until its next probe.
      for (const node of nodes) {
        node.clock.reset();
        node.breaker?.probeNow();
      }
      // Redis may have lost this process's inspection label (a restart): write it again.
      engine.instance.refresh();
    });
    this.metrics = new ClientMetrics(resolved.metrics, {
      events,
      waiting: () => lines.waiting,
      heldByKind: () => engine.held.countByKind(),
      circuits: () => this.circuits(),
    });
    this.connections = connections;
    this.engine = engine;
    this.target = connections.target;
    this.mode = connections.mode;
    this.lazyConnect = resolved.lazyConnect;
  }

  /** See LockClient.connect: the connections (unless lazyConnect), then the metrics. Idempotent. */
  connect(): Promise<void> {
    this.connecting ??= (
      this.lazyConnect ? Promise.resolve() : this.connections.establish((target, error) => this.engine.background.report('connection', target, error))
    ).then(() => this.metrics.start());
    return this.connecting;
  }

  /** See LockClient.close: the metrics, the engine (renewals, waits, held locks), then the connections. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.metrics.stop();
      await this.engine.close();
      for (const node of this.engine.nodes) node.stop(); // the circuit breakers' probes
      await this.connections.close();
    })();
    return this.closing;
  }

  stats(): LockClientStats {
    return { held: this.engine.held.size, renewing: this.engine.renewingCount, waitingChannels: this.engine.lines.activeChannels };
  }

  /** See LockClient.circuits. */
  circuits(): LockCircuitStatus[] {
    return this.engine.nodes.flatMap(({ breaker, target }) =>
      breaker ? [{ node: target, state: breaker.state, failures: breaker.failures, since: breaker.since }] : [],
    );
  }

  healthTargets(): HealthTargets {
    return {
      commands: this.engine.nodes.map((node) => ({ target: node.target, client: node.redis })),
      subscribers: this.connections.nodes.map((node) => ({ target: `${node.target} (subscriber)`, client: node.subscriber })),
    };
  }
}
