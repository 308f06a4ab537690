import type { RedisClient } from '../connection/connection-strategy.js';

/** The subscription side of pub/sub, plain or sharded, as the notifier needs it. */
export interface SubscriberPort {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  onMessage(listener: (channel: string) => void): void;
  /** Called when the connection is ready again after a drop (messages may have been missed meanwhile). */
  onReconnect(listener: () => void): void;
}

/** The part of ioredis' Redis and Cluster used here (their intersection type is unusable). */
interface PubSubConnection {
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  ssubscribe(channel: string): Promise<unknown>;
  sunsubscribe(channel: string): Promise<unknown>;
  on(event: string, listener: (channel: string) => void): unknown;
}

export function createSubscriberPort(client: RedisClient, sharded: boolean): SubscriberPort {
  const redis = client as unknown as PubSubConnection;
  return {
    subscribe: (channel) => (sharded ? redis.ssubscribe(channel) : redis.subscribe(channel)),
    unsubscribe: (channel) => (sharded ? redis.sunsubscribe(channel) : redis.unsubscribe(channel)),
    onMessage: (listener) => {
      redis.on(sharded ? 'smessage' : 'message', (channel: string) => listener(channel));
    },
    onReconnect: (listener) => {
      redis.on('ready', listener);
    },
  };
}
