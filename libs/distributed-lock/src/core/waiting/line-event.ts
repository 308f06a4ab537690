/**
 * What a message on a lock's channel means to this process's line of waiting callers, once the lock's
 * kind has decoded it (each kind writes its messages in its Lua and reads them in its codec, side by
 * side: see `core/locks/<kind>/`). The line acts on these events and knows no kind and no message text.
 */
export type LineEvent =
  /** The lock was freed, or its state changed so that a waiter may now get it: the first caller looks. */
  | { readonly type: 'freed' }
  /**
   * Addressed to one caller by its owner id: wakes it wherever it is in the line. With `grant`, what a
   * release granted that caller in Redis (see Grant); without, a reason to look at once. On a channel
   * every waiting process hears (a plain lock's), `othersLookAfterMs`: when the caller is another
   * process's, this process's first caller looks again after that long, in case the grant is never taken.
   */
  | { readonly type: 'addressed'; readonly owner: string; readonly grant: Grant | undefined; readonly othersLookAfterMs?: number };

/**
 * What a release in any process granted one waiting caller in its own script (a plain lock, a semaphore's permits):
 * held in Redis in that caller's name from the message on, with `token`, until `expiresAtServerMs` (the
 * server's clock) unless the caller claims it first. `leaseMs`: the whole lease of such a grant (a
 * caller that hears of it with less than half of it left takes it with an attempt of its own instead).
 */
export interface Grant {
  readonly token: number;
  readonly expiresAtServerMs: number;
  readonly leaseMs: number;
}

/** A kind's decoder of the messages its scripts publish on the channel its waiters listen on. */
export interface ChannelMessages {
  decode(message: string): LineEvent;
}
