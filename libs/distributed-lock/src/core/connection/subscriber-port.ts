import type { PubSubPort } from '../redis/redis-port.js';
import type { PubSubSelector } from './pubsub-selector.js';

/** The subscription side of pub/sub, plain or sharded, as the notifier needs it. */
export interface SubscriberPort {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  onMessage(listener: (channel: string, message: string) => void): void;
  /** Called when the connection is ready again after a drop, or (cluster) its subscriptions moved: messages may have been missed meanwhile. */
  onReconnect(listener: () => void): void;
}

/**
 * Subscriptions on `connection`, sharded or plain as `pubsub` chose (a cluster's subscriber connection
 * can do both); the first one waits for that choice.
 */
export function createSubscriberPort(connection: PubSubPort, pubsub: PubSubSelector): SubscriberPort {
  return {
    subscribe: async (channel) => connection.subscribe(channel, (await pubsub.select()).flavour === 'sharded'),
    unsubscribe: async (channel) => connection.unsubscribe(channel, (await pubsub.select()).flavour === 'sharded'),
    onMessage: (listener) => connection.onMessage(listener),
    onReconnect: (listener) => {
      connection.onResubscribed((shardedOnly) => {
        if (!shardedOnly || pubsub.sharded) listener();
      });
    },
  };
}

/**
 * RedLock: one subscription per node. A release publishes on every node that held the lock; the
 * first message wakes the waiter (the extra ones are absorbed as an already-pending wake-up). A node
 * that is down does not block the others: subscribing succeeds as soon as one node accepts (a node
 * lost for good never answers: waiting for every node's answer left waiters deaf to releases, found
 * by the simulator), and fails when every node refused.
 */
export function combineSubscriberPorts(ports: SubscriberPort[]): SubscriberPort {
  if (ports.length === 1) return ports[0]!;
  const anyAccepts = async (run: (port: SubscriberPort) => Promise<unknown>): Promise<void> => {
    try {
      await Promise.any(ports.map(run));
    } catch (error) {
      throw (error as AggregateError).errors[0];
    }
  };
  return {
    subscribe: (channel) => anyAccepts((port) => port.subscribe(channel)),
    unsubscribe: (channel) => anyAccepts((port) => port.unsubscribe(channel)),
    onMessage: (listener) => ports.forEach((port) => port.onMessage(listener)),
    onReconnect: (listener) => ports.forEach((port) => port.onReconnect(listener)),
  };
}
