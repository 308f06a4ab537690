import type { PubSubChoice } from '../events/pubsub-choice.js';
import type { PubSubPort, RedisCommands } from '../redis/redis-port.js';
import type { SubscriberPort } from './subscriber-port.js';

const PLAIN: PubSubChoice = { flavour: 'plain', reason: 'SUBSCRIBE' };

/**
 * The one place that decides between sharded and plain pub/sub for unlock notifications. Only a
 * cluster gains from sharded pub/sub (a release then reaches only its slot's shard instead of every
 * node), and only a cluster whose servers have it, Redis 7+: Redis 6 (what Azure Cache for Redis
 * runs), KeyDB and some managed services do not. There plain PUBLISH, which a cluster forwards to
 * every node, does the same job with more bus traffic. The subscriber must also be able to do it: a
 * cluster client without ioredis' `shardedSubscribers` (iovalkey, older ioredis) sends every
 * subscription through one node, which refuses sharded channels of other nodes' slots.
 *
 * Every process of an application must choose alike, or one's releases would not reach the other's
 * waiters; so the choice follows what the server answers, asked once, after connecting (with
 * lazyConnect: at the first lock call), never a guess. A question that fails for a network reason is
 * asked again at the next call; one the server refuses (a renamed COMMAND, an ACL) falls back to
 * `INFO server`, and failing that to plain pub/sub, which every Redis has.
 */
export class PubSubSelector {
  private choice: PubSubChoice | undefined;
  private asking: Promise<PubSubChoice> | undefined;

  /**
   * `mayShard`: the deployment could use sharded pub/sub (a cluster). `command`: the connection to
   * ask; `subscriber`: the one that would subscribe. `chosen` hears the choice once.
   */
  constructor(
    private readonly command: RedisCommands,
    private readonly subscriber: PubSubPort,
    private readonly mayShard: boolean,
    private readonly chosen: (choice: PubSubChoice) => void,
  ) {}

  /** The choice, once made. */
  get current(): PubSubChoice | undefined {
    return this.choice;
  }

  /** Sharded pub/sub is chosen (false until the choice is made). */
  get sharded(): boolean {
    return this.choice?.flavour === 'sharded';
  }

  /** Makes the choice, asking the server when it matters; concurrent callers share one question. */
  select(): Promise<PubSubChoice> {
    if (this.choice) return Promise.resolve(this.choice);
    this.asking ??= this.decide().then(
      (choice) => {
        this.choice = choice;
        this.chosen(choice);
        return choice;
      },
      (error: unknown) => {
        this.asking = undefined;
        throw error;
      },
    );
    return this.asking;
  }

  private decide(): Promise<PubSubChoice> {
    if (!this.mayShard) return Promise.resolve(PLAIN);
    if (!this.subscriber.shardedEverywhere) {
      return Promise.resolve({ flavour: 'plain', reason: 'the cluster client subscribes through one node: no shardedSubscribers (iovalkey, older ioredis)' });
    }
    return askServer(this.command);
  }

  /**
   * Subscriptions on `connection` (a node's subscriber), sharded or plain as chosen here (a cluster's
   * subscriber connection can do both); the first one waits for the choice.
   */
  subscriberPort(connection: PubSubPort): SubscriberPort {
    return {
      subscribe: async (channel) => connection.subscribe(channel, (await this.select()).flavour === 'sharded'),
      unsubscribe: async (channel) => connection.unsubscribe(channel, (await this.select()).flavour === 'sharded'),
      onMessage: (listener) => connection.onMessage(listener),
      onReconnect: (listener) => {
        connection.onResubscribed((shardedOnly) => {
          if (!shardedOnly || this.sharded) listener();
        });
      },
    };
  }

  /** For hot paths: nothing once the choice is made, else the wait for it. */
  pending(): Promise<PubSubChoice> | undefined {
    return this.choice ? undefined : this.select();
  }
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

/** A cluster: sharded pub/sub if its server knows SPUBLISH. */
async function askServer(redis: RedisCommands): Promise<PubSubChoice> {
  let hasSpublish: boolean | undefined;
  let refused: string | undefined;
  try {
    // One entry per command asked about: its description, or nil for a command the server lacks.
    const reply = (await redis.serverCommand(['COMMAND', 'INFO', 'SPUBLISH'])) as unknown[];
    hasSpublish = Array.isArray(reply) && reply[0] !== null && reply[0] !== undefined;
  } catch (error) {
    refused = refusal(redis, error);
  }
  if (hasSpublish) return { flavour: 'sharded', reason: 'SSUBSCRIBE' };
  let version: string | undefined;
  try {
    version = /^redis_version:(\S+)/m.exec(String(await redis.serverCommand(['INFO', 'server'])))?.[1];
  } catch (error) {
    refused ??= refusal(redis, error);
  }
  if (hasSpublish === undefined && version !== undefined && Number(version.split('.')[0]) >= 7) {
    return { flavour: 'sharded', reason: `SSUBSCRIBE; Redis ${version}` };
  }
  if (hasSpublish === false || version !== undefined) {
    return { flavour: 'plain', reason: `${version ? `Redis ${version}` : 'this'} cluster has no sharded pub/sub` };
  }
  return { flavour: 'plain', reason: `the cluster did not say whether it has sharded pub/sub: ${refused}` };
}

/** The server's refusal (an error reply), or a rethrow of anything else: the network, a timeout. */
function refusal(redis: RedisCommands, error: unknown): string {
  if (redis.isReplyError(error)) return (error as Error).message;
  throw error;
}
