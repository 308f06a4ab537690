import type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisListener, NodeRedisSentinelLike } from './node-redis.types.js';
import { DEFAULT_REPLY_TYPES, NodeRedisConnection, type NodeRedisEvent } from './node-redis.port.js';
import type { ConnectionEvent, PubSubPort } from './redis-port.js';

/** The three shapes of subscriber: a client's duplicate, a cluster's duplicate, a sentinel itself. */
export type NodeRedisPubSub =
  | { readonly kind: 'client'; readonly connection: NodeRedisClientLike }
  | { readonly kind: 'cluster'; readonly connection: NodeRedisClusterLike }
  | { readonly kind: 'sentinel'; readonly connection: NodeRedisSentinelLike };

/** A sentinel's switch to a new master (its subscriptions follow it there). */
export const MASTER_CHANGED: NodeRedisEvent = {
  name: 'topology-change',
  accept: (event) => (event as { type?: unknown } | undefined)?.type === 'MASTER_CHANGE',
};

/**
 * Subscriptions through node-redis. A client's subscriber is a duplicate the library owns (a
 * subscribed RESP2 connection runs nothing else); a cluster's is a duplicate too, made with
 * `minimizeConnections` (node-redis then connects only the shards' subscribers it needs: sharded
 * channels go to their slot's master, plain ones through one node). A sentinel keeps its own
 * connection for subscriptions to the current master and has no `duplicate`, so its subscriber is
 * the user's sentinel itself: close unsubscribes this port's listener from every channel it took and
 * takes its event listeners off, leaving the sentinel as it was.
 *
 * node-redis subscribes again by itself after a reconnect: a client says so with `ready` (emitted
 * once its subscriptions are restored), a cluster with `node-ready` when a shard's subscriber is new
 * (after a failover or a resharding; a node's client says it once only, so a cluster subscriber's
 * reconnection to the same node goes unreported), a sentinel with a change of master. A subscribe of a channel
 * already subscribed is a no-op in node-redis (nothing is sent), so the periodic re-check of waiting
 * callers (see Subscriptions) is what covers a reconnect that none of those events reports.
 */
export class NodeRedisSubscriber extends NodeRedisConnection implements PubSubPort {
  private readonly messageListeners: ((channel: string, message: string) => void)[] = [];
  /** Channels subscribed through this port, and whether sharded: what close gives back on a sentinel. */
  private readonly channels = new Map<string, boolean>();
  /** Subscribes under way: a connection they open is not a reconnection (see onResubscribed). */
  private subscribing = 0;
  private readonly deliver: NodeRedisListener = (message, channel) => {
    for (const listener of this.messageListeners) listener(channel, String(message));
  };

  constructor(private readonly pubsub: NodeRedisPubSub) {
    super(`node-redis ${pubsub.kind} (subscriptions)`, pubsub.connection, pubsub.kind !== 'sentinel');
  }

  get shardedEverywhere(): boolean {
    return this.pubsub.kind === 'cluster';
  }

  ping(): Promise<unknown> {
    const { pubsub } = this;
    if (pubsub.kind === 'client') return pubsub.connection.sendCommand(['PING'], DEFAULT_REPLY_TYPES);
    if (pubsub.kind === 'cluster') return pubsub.connection.sendCommand(undefined, true, ['PING'], DEFAULT_REPLY_TYPES);
    return pubsub.connection.sendCommand(false, ['PING'], DEFAULT_REPLY_TYPES);
  }

  async subscribe(channel: string, sharded: boolean): Promise<unknown> {
    this.subscribing += 1;
    try {
      await this.connect();
      const { connection } = this.pubsub;
      await (sharded ? connection.sSubscribe(channel, this.deliver) : connection.subscribe(channel, this.deliver));
    } finally {
      this.subscribing -= 1;
    }
    this.channels.set(channel, sharded);
    return undefined;
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<unknown> {
    this.channels.delete(channel);
    const { connection } = this.pubsub;
    return sharded ? connection.sUnsubscribe(channel, this.deliver) : connection.unsubscribe(channel, this.deliver);
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.messageListeners.push(listener);
  }

  onResubscribed(listener: (shardedOnly: boolean) => void): void {
    // A connection made by a subscribe of ours (the lazy first one; a cluster's first to a shard, whose
    // client says node-ready once) is no reconnection: nothing was missed.
    this.on('ready', () => {
      if (this.subscribing === 0) listener(false);
    });
  }

  override async close(): Promise<void> {
    if (this.owned) return super.close();
    this.removeListeners();
    const channels = [...this.channels];
    this.channels.clear();
    await Promise.all(channels.map(([channel, sharded]) => this.unsubscribe(channel, sharded).catch(() => undefined)));
  }

  override disconnect(): void {
    if (this.owned) super.disconnect();
    else void this.close();
  }

  protected eventOf(event: ConnectionEvent): NodeRedisEvent | undefined {
    if (this.pubsub.kind === 'client') return { name: event };
    if (event === 'error') return { name: 'error' };
    if (this.pubsub.kind === 'cluster') return event === 'ready' ? { name: 'node-ready' } : { name: 'disconnect' };
    return event === 'ready' ? MASTER_CHANGED : undefined;
  }
}
