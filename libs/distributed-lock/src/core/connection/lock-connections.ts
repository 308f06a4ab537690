import type { ResolvedLockClientOptions } from '../config/resolve-lock-client-options.js';
import { LockNode } from './lock-node.js';
import { LockConnectionError } from '../errors/lock-connection.error.js';
import type { LockEvents } from '../events/lock-events.js';
import type { SubscriberPort } from './subscriber-port.js';
import type { RedisMode } from '../config/connection-config.js';
import type { CircuitChange } from './circuit-breaker.js';
import type { ConnectionStrategy } from './connection-strategy.js';
import { ConnectionRevival } from './connection-revival.js';
import { createConnectionStrategy } from './create-connection-strategy.js';
import { establishConnection } from './establish-connection.js';
import { combineSubscriberPorts, PubSubSelector } from './pubsub-selector.js';
import type { ScriptBatch } from '../scripts/script-batch.js';
import { IoredisPort, IoredisSubscriber } from '../redis/ioredis.port.js';
import type { PubSubPort, RedisConnection, RedisPort } from '../redis/redis-port.js';
import type { Clock } from '../util/clock.js';

/** One place lock state lives, through the client port: where scripts run, and where this client subscribes. */
export interface LockNodeConnections {
  readonly command: RedisPort;
  readonly subscriber: PubSubPort;
  /** Where, for error messages. */
  readonly target: string;
}

/**
 * The connections of one lock client, from its options: per node, one for commands and one for
 * subscriptions (ioredis connections from the mode's strategy, or around a client the user brought:
 * ioredis or node-redis, through the port; or the Valkey GLIDE clients the port makes from the
 * settings given), plus replica readers (master-slave). Opens them at start-up, chooses the pub/sub
 * kind, and closes the ones it opened (never a client the user brought).
 */
export class LockConnections {
  /** Where this client connects, for logs (no credentials). */
  readonly target: string;
  /** The deployment mode ('client' when a client was given). */
  readonly mode: RedisMode | 'client';
  readonly nodes: readonly LockNodeConnections[];
  readonly replicaReaders: readonly RedisPort[];
  /** Sharded or plain pub/sub for unlock notifications, chosen once the server is known. */
  readonly pubsub: PubSubSelector;
  private readonly ownsCommand: boolean;
  /** Listeners put on connections this client does not own, taken off at close. */
  private readonly borrowedListeners: (() => void)[] = [];
  /** Connects again what the client library gave up by itself, from start-up until close. */
  private readonly revival: ConnectionRevival;
  private readonly clock: Clock;
  private readonly events: LockEvents;

  constructor(resolved: ResolvedLockClientOptions, events: LockEvents) {
    this.clock = resolved.clock;
    this.events = events;
    this.revival = new ConnectionRevival(resolved.clock);
    const strategy = resolved.connection && createConnectionStrategy(resolved.connection);
    let mayShard: boolean;
    if (strategy) {
      this.nodes = ioredisNodes(strategy);
      this.replicaReaders = (strategy.createReplicaReaders?.() ?? []).map((reader) => new IoredisPort(reader));
      this.ownsCommand = true;
      this.target = strategy.target;
      this.mode = strategy.mode;
      mayShard = strategy.shardedPubSub;
    } else {
      const clients = resolved.clients!;
      const client = clients[0]!;
      mayShard = clients.length === 1 && client.isCluster;
      // A subscriber made from each client (a cluster's can do sharded and plain subscriptions: see PubSubSelector).
      const given = clients.length > 1 ? (i: number) => `options.client[${i}]` : () => 'options.client';
      this.nodes = clients.map((each, i) => ({
        command: each,
        subscriber: each.subscriber(),
        target: each.madeByLibrary ? `the ${each.driver} clients made from ${given(i)}` : `the ${each.driver} client given in ${given(i)}`,
      }));
      this.replicaReaders = [];
      // A client the user made stays theirs; GLIDE's, made from the settings given, is the library's.
      this.ownsCommand = client.madeByLibrary === true;
      this.target = this.nodes.map((node) => node.target).join(', ');
      // Several clients: RedLock over them, as over the nodes of `connection: { mode: 'redlock' }`.
      this.mode = clients.length > 1 ? 'redlock' : 'client';
    }
    // Our own connections report errors as events (the Nest module logs them, rate-limited); without
    // a listener ioredis would print every reconnection failure to the console (and node-redis throw it).
    for (const connection of this.owned()) {
      connection.on('error', (error) =>
        events.emit('background-error', { operation: 'connection', name: this.target, error: error ?? new Error('connection error') }),
      );
    }
    const first = this.nodes[0]!;
    this.pubsub = new PubSubSelector(first.command, first.subscriber, mayShard, (choice) => events.emit('pubsub', choice));
  }

  /**
   * Where lock state lives, one LockNode per node; their scripts wait for the pub/sub choice, refuse to
   * run later than `timeoutMs` after they were sent (the operation timeout, see NodeClock), and travel in
   * `batch` when several are issued in one turn (group commit), one batch per slot with `oneSlotPerScript`.
   * Each node has its own circuit breaker (`circuitBreaker`, whose changes are `circuit` events), except
   * a cluster client's: one connection object serves every shard there, and one master down must not
   * refuse the calls of the others.
   */
  lockNodes(timeoutMs: number, batch: ScriptBatch, oneSlotPerScript = false, circuitBreaker: ResolvedLockClientOptions['circuitBreaker'] = false): LockNode[] {
    return this.nodes.map(
      (node) =>
        new LockNode(node.command, {
          target: node.target,
          timeoutMs,
          batch: node.command.groupCommit ? batch : undefined,
          pubsub: this.pubsub,
          oneSlotPerScript: oneSlotPerScript || node.command.isCluster,
          clock: this.clock,
          ...(circuitBreaker && !node.command.isCluster
            ? { circuitBreaker, circuitChanged: (change: CircuitChange) => this.events.emit('circuit', { node: node.target, ...change }) }
            : {}),
        }),
    );
  }

  /** The subscription side of every node, as one port. */
  subscriberPort(): SubscriberPort {
    return combineSubscriberPorts(this.nodes.map((node) => this.pubsub.subscriberPort(node.subscriber)));
  }

  /** Calls `listener` whenever a command connection is ready again (after a drop). */
  onCommandReady(listener: () => void): void {
    for (const node of this.nodes) {
      node.command.on('ready', listener);
      if (!this.ownsCommand) this.borrowedListeners.push(() => node.command.off('ready', listener));
    }
  }

  /**
   * Opens the connections, proving each with a PING, and chooses the pub/sub kind. Every node must
   * answer, except in redlock mode, where a majority is enough: `nodeDown` is told of the others,
   * which keep reconnecting.
   */
  async establish(nodeDown: (target: string, error: unknown) => void): Promise<void> {
    const results = await Promise.allSettled(
      this.nodes.map(async (node) => {
        await establishConnection(node.command, node.target, this.clock);
        await establishConnection(node.subscriber, `${node.target} (subscriber connection)`, this.clock);
      }),
    );
    const failures = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    const needed = this.mode === 'redlock' ? Math.floor(this.nodes.length / 2) + 1 : this.nodes.length;
    if (this.nodes.length - failures.length < needed) throw failures[0]!.reason;
    results.forEach((result, i) => {
      if (result.status === 'rejected') {
        const node = this.nodes[i]!;
        nodeDown(node.target, result.reason);
        for (const connection of [node.command, node.subscriber]) connection.connect().catch(() => undefined);
      }
    });
    try {
      await this.pubsub.select();
    } catch (error) {
      for (const connection of this.owned()) connection.disconnect();
      throw new LockConnectionError(this.target, `could not ask the server whether it has sharded pub/sub: ${(error as Error).message}`, error);
    }
    for (const connection of this.owned()) this.revival.watch(connection);
  }

  /** Closes the connections this client opened (never a client given in options). */
  async close(): Promise<void> {
    this.revival.stop();
    for (const remove of this.borrowedListeners.splice(0)) remove();
    await Promise.all(this.owned().map((connection) => connection.close()));
  }

  /** What this client opened and closes: everything, or, around a client the user brought, the subscriber made from it. */
  private owned(): RedisConnection[] {
    return [...this.nodes.flatMap((node) => (this.ownsCommand ? [node.command, node.subscriber] : [node.subscriber])), ...this.replicaReaders];
  }
}

/** The ioredis connections a mode's strategy creates, behind the port. */
function ioredisNodes(strategy: ConnectionStrategy): LockNodeConnections[] {
  return strategy
    .createNodes()
    .map((node) => ({ command: new IoredisPort(node.command), subscriber: new IoredisSubscriber(node.subscriber), target: node.target }));
}
