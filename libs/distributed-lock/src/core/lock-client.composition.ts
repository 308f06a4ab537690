import type { LockClientOptions } from './config/lock-client-options.js';
import { resolveLockClientOptions } from './config/resolve-lock-client-options.js';
import { LockConnections } from './connection/lock-connections.js';
import { LockEngine } from './engine/lock-engine.js';
import { LockEvents } from './events/lock-events.js';
import { LOCK_SCRIPT_BATCH } from './lock-scripts.js';
import { ClientMetrics } from './metrics/client-metrics.js';
import { LockLines } from './waiting/lock-lines.js';

/** What one LockClient is made of (see composeLockClient). */
export interface LockClientParts {
  readonly events: LockEvents;
  /** The client's connections, prepared (connect() opens them). */
  readonly connections: LockConnections;
  /** What the client's lock objects run on (their LockRuntime). */
  readonly engine: LockEngine;
  /** OpenTelemetry metrics: started by connect() when a meter provider is there, stopped by close(). */
  readonly metrics: ClientMetrics;
  readonly lazyConnect: boolean;
}

/**
 * The composition root of a lock client: validates the options (InvalidLockConfigError), prepares the
 * connections, builds the engine over their nodes and this process's lock lines, and the metrics, and
 * wires what a command connection that is ready again sets going. Each part is built from parts built
 * before it: nothing reaches a part that does not exist yet.
 */
export function composeLockClient(options: LockClientOptions, extraOptionKeys: readonly string[]): LockClientParts {
  const resolved = resolveLockClientOptions(options, extraOptionKeys);
  const events = new LockEvents();
  const connections = new LockConnections(resolved, events);
  const { clientId, clock } = resolved;
  const nodes = connections.lockNodes(resolved.operationTimeoutMs, LOCK_SCRIPT_BATCH, resolved.oneSlotPerScript);
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
  });
  connections.onCommandReady(() => {
    // Waiters whose attempts failed while a command connection was down look again as soon as it is back.
    lines.wakeAll();
    // A new connection may lead to another server (a failover): its clock is read again (see NodeClock).
    for (const node of nodes) node.clock.reset();
    // Redis may have lost this process's inspection label (a restart): write it again.
    engine.instance.refresh();
  });
  const metrics = new ClientMetrics(resolved.metrics, {
    events,
    waiting: () => lines.waiting,
    heldByKind: () => engine.held.countByKind(),
  });
  return { events, connections, engine, metrics, lazyConnect: resolved.lazyConnect };
}
