/**
 * The subscription side of pub/sub, plain or sharded, as the waiting lines need it. Implemented over a
 * node's subscriber connection (PubSubSelector.subscriberPort) and over RedLock's nodes
 * (combineSubscriberPorts, both in pubsub-selector.ts); the waiting specs give it fakes.
 */
export interface SubscriberPort {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  onMessage(listener: (channel: string, message: string) => void): void;
  /** Called when the connection is ready again after a drop, or (cluster) its subscriptions moved: messages may have been missed meanwhile. */
  onReconnect(listener: () => void): void;
}
