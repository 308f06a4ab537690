/** How unlock notifications travel: sharded pub/sub (SPUBLISH/SSUBSCRIBE) or plain (PUBLISH/SUBSCRIBE). */
export type PubSubFlavour = 'sharded' | 'plain';

export interface PubSubChoice {
  flavour: PubSubFlavour;
  /** Why, in a few words, for the start-up log line: `SSUBSCRIBE`, `Redis 6.0.16 cluster has no sharded pub/sub`... */
  reason: string;
}

/** "sharded pub/sub (SSUBSCRIBE)", "plain pub/sub (Redis 6.0.16 cluster has no sharded pub/sub)". */
export function describePubSubChoice(choice: PubSubChoice): string {
  return `${choice.flavour} pub/sub (${choice.reason})`;
}
