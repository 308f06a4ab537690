import { GlideClientHolder } from './glide-connection.js';
import {
  GLIDE_EXACT_CHANNELS,
  GLIDE_RESP3,
  GLIDE_SHARDED_CHANNELS,
  GLIDE_STRING_DECODER,
  type GlideChannels,
  type GlidePubSubMessage,
  type GlideSettingsLike,
} from './glide.types.js';
import type { ConnectionEvent, ConnectionStatus, PubSubPort } from './redis-port.js';

/** How many channels of `mode` a subscription state lists. */
const count = (channels: GlideChannels, mode: number): number => channels[mode]?.size ?? 0;

/**
 * Unlock notifications through Valkey GLIDE (2.3 or later): a second GLIDE client the library creates
 * from the configuration given (in RESP3, which GLIDE's pub/sub needs), whose messages reach a callback
 * set when it is created (GLIDE delivers pub/sub messages nowhere else, which is why the library makes
 * this client itself rather than subscribing on one of the application's), and which subscribes to
 * channels as waiters need them (`subscribe`/`ssubscribe`, GLIDE 2.3's dynamic pub/sub). A cluster
 * client subscribes to a sharded channel at its slot's primary and follows it after a failover or a
 * resharding by itself.
 *
 * GLIDE subscribes again by itself after a reconnect (its synchronizer compares the subscriptions
 * wanted with those in place) and tells nobody: waiters find a release they missed meanwhile by
 * looking again (see Subscriptions), as after any lost notification. The subscriber's health is what
 * that synchronizer says: `status` is `reconnecting` while fewer subscriptions are in place than
 * wanted (asked again, in the background, whenever `status` is read and no question is pending: the
 * health indicator reads it; a local question to GLIDE's core, which sends nothing to the server).
 * A client GLIDE closed by itself is created again (see GlideClientHolder), subscribed to the
 * channels of this port from the start, and the waiters then look again (onResubscribed).
 */
export class GlideSubscriber implements PubSubPort {
  readonly driver = 'valkey-glide' as const;
  readonly shardedEverywhere: boolean;
  private readonly messageListeners: ((channel: string, message: string) => void)[] = [];
  private readonly resubscribedListeners: ((shardedOnly: boolean) => void)[] = [];
  /** Channels subscribed through this port, and whether sharded: what a new client starts with. */
  private readonly channels = new Map<string, boolean>();
  private readonly holder: GlideClientHolder;
  /** The last answer of getSubscriptions: all wanted subscriptions in place. */
  private inPlace = true;
  /** A getSubscriptions question is pending. */
  private checking = false;
  /** Clients created: a second one follows a client GLIDE closed, so waiters must look again. */
  private created = 0;
  private readonly deliver = (message: GlidePubSubMessage): void => {
    const channel = String(message.channel);
    const text = String(message.message);
    for (const listener of this.messageListeners) listener(channel, text);
  };

  constructor(
    private readonly settings: GlideSettingsLike,
    private readonly timeoutMs: number,
    readonly isCluster: boolean,
  ) {
    this.shardedEverywhere = isCluster;
    this.holder = new GlideClientHolder('Valkey GLIDE client (subscriptions)', () => this.createClient());
  }

  get status(): ConnectionStatus {
    const status = this.holder.status;
    if (status !== 'ready') return status;
    this.checkSubscriptions();
    return this.inPlace ? 'ready' : 'reconnecting';
  }

  connect(): Promise<void> {
    return this.holder.connect();
  }

  ping(): Promise<unknown> {
    return this.holder.run((client) => client.customCommand(['PING'], { decoder: GLIDE_STRING_DECODER }));
  }

  async close(): Promise<void> {
    this.holder.close();
  }

  disconnect(): void {
    this.holder.close();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.holder.on(event, listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.holder.off(event, listener);
  }

  async subscribe(channel: string, sharded: boolean): Promise<unknown> {
    const channels = new Set([channel]);
    await this.holder.run((client) => (sharded ? client.ssubscribe!(channels, this.timeoutMs) : client.subscribe(channels, this.timeoutMs)));
    this.channels.set(channel, sharded);
    return undefined;
  }

  async unsubscribe(channel: string, sharded: boolean): Promise<unknown> {
    this.channels.delete(channel);
    if (!this.holder.current) return undefined;
    const channels = new Set([channel]);
    return this.holder.run((client) => (sharded ? client.sunsubscribe!(channels, this.timeoutMs) : client.unsubscribe(channels, this.timeoutMs)));
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.messageListeners.push(listener);
  }

  onResubscribed(listener: (shardedOnly: boolean) => void): void {
    // 'ready' after a failure: the client answers again, and GLIDE has re-subscribed or is doing so.
    this.holder.on('ready', () => listener(false));
    // A new client after GLIDE closed the last one (see createClient).
    this.resubscribedListeners.push(listener);
  }

  /** A new subscriber client, subscribed from the start to this port's channels (none, the first time). */
  private async createClient(): Promise<object> {
    const exact = new Set<string>();
    const sharded = new Set<string>();
    for (const [channel, isSharded] of this.channels) (isSharded ? sharded : exact).add(channel);
    const channelsAndPatterns: GlideChannels = { [GLIDE_EXACT_CHANNELS]: exact };
    if (this.isCluster) channelsAndPatterns[GLIDE_SHARDED_CHANNELS] = sharded;
    const { configuration } = this.settings;
    const client = await this.settings.glide.createClient({
      ...configuration,
      requestTimeout: configuration.requestTimeout ?? this.timeoutMs,
      protocol: GLIDE_RESP3,
      pubsubSubscriptions: { channelsAndPatterns, callback: this.deliver },
    } as never);
    this.created += 1;
    // Once the holder has taken the new client (after this returns): the waiters look again.
    if (this.created > 1) void Promise.resolve().then(() => this.resubscribedListeners.forEach((listener) => listener(false)));
    return client;
  }

  /** Asks GLIDE, in the background, whether every subscription wanted is in place (see the class comment). */
  private checkSubscriptions(): void {
    const client = this.holder.current;
    if (!client || this.checking) return;
    this.checking = true;
    client.getSubscriptions().then(
      ({ desiredSubscriptions, actualSubscriptions }) => {
        this.checking = false;
        this.inPlace = [GLIDE_EXACT_CHANNELS, GLIDE_SHARDED_CHANNELS].every((mode) => count(actualSubscriptions, mode) >= count(desiredSubscriptions, mode));
      },
      () => {
        this.checking = false;
        this.inPlace = false;
      },
    );
  }
}
