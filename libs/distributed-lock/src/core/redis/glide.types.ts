/**
 * What the library uses of Valkey GLIDE (`@valkey/valkey-glide` 2.3 or later), typed structurally:
 * neither its code nor its type declarations import GLIDE (an optional peer), and it works with the
 * copy of GLIDE the application installed, whose classes it is given (see GlideClientSettings).
 */

/** GLIDE's numeric enums, by value: `Decoder.String`, `ProtocolVersion.RESP3`, `PubSubChannelModes`. */
export const GLIDE_STRING_DECODER = 1;
export const GLIDE_RESP3 = 0;
export const GLIDE_EXACT_CHANNELS = 0;
export const GLIDE_SHARDED_CHANNELS = 2;

/** Where a cluster client sends a command: by key, by node address, or to any node. */
export type GlideRoute =
  'randomNode' | { readonly type: 'primarySlotKey'; readonly key: string } | { readonly type: 'routeByAddress'; readonly host: string; readonly port: number };

/** A message as GLIDE hands it to the subscriber's callback. */
export interface GlidePubSubMessage {
  readonly message: unknown;
  readonly channel: unknown;
}

/** The channels of one GLIDE client, by mode (0 exact, 2 sharded), as the client's configuration and `getSubscriptions` give them. */
export type GlideChannels = Partial<Record<number, Set<unknown>>>;

/** A `GlideClient` or `GlideClusterClient`, as `createClient` resolves it. */
export interface GlideClientLike {
  customCommand(args: string[], options?: { route?: GlideRoute; decoder?: number }): Promise<unknown>;
  close(errorMessage?: string): void;
  subscribe(channels: Iterable<string>, timeoutMs: number): Promise<unknown>;
  unsubscribe(channels: Iterable<string> | null, timeoutMs: number): Promise<unknown>;
  /** Cluster clients only. */
  ssubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<unknown>;
  sunsubscribe?(channels: Iterable<string> | null, timeoutMs: number): Promise<unknown>;
  getSubscriptions(): Promise<{ desiredSubscriptions: GlideChannels; actualSubscriptions: GlideChannels }>;
}

/** GLIDE's configuration of a client, as far as the library reads or sets it. */
export interface GlideConfigurationLike {
  readonly addresses: readonly { readonly host: string; readonly port?: number }[];
  readonly requestTimeout?: number;
  readonly [option: string]: unknown;
}

/** `GlideClient` or `GlideClusterClient` itself: the class, whose `createClient` makes a connected client. */
export interface GlideClientClassLike {
  createClient(configuration: never): Promise<object>;
  readonly prototype: object;
}

/** What the `client` option takes for GLIDE: the class, and the configuration to create clients with. */
export interface GlideSettingsLike {
  readonly glide: GlideClientClassLike;
  readonly configuration: GlideConfigurationLike;
}
