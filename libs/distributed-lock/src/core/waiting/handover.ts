/**
 * What a hand-over came to: the lock (with its token, lease counted from `startedAt`), or not;
 * `uncertain`: the releaser got no answer, so Redis may have granted it (the waiter must then make
 * sure that, should it end without the lock, nothing stays held in its name).
 */
export type HandoverOutcome = { granted: true; token: number; startedAt: number } | { granted: false; uncertain?: boolean };

/**
 * A release in this process handing its lock straight to a waiting caller of this process (see
 * LockLine.nextHandover). The releaser settles it with the reply; the waiter takes the outcome, or declines
 * it if it stopped waiting meanwhile (timeout, abort, close). Whoever learns last that a granted lock
 * is not wanted gives it back, so it never sits unused for a whole lease.
 */
export class Handover {
  private outcome: HandoverOutcome | undefined;
  private declined = false;
  private resolve!: (outcome: HandoverOutcome) => void;
  readonly result = new Promise<HandoverOutcome>((resolve) => (this.resolve = resolve));

  /** The releaser's side. False when the waiter declined meanwhile: a granted lock must then be released. */
  settle(outcome: HandoverOutcome): boolean {
    if (this.outcome) return !this.declined;
    this.outcome = outcome;
    this.resolve(outcome);
    return !this.declined;
  }

  /** The waiter's side, when it stops waiting: the outcome if already settled (release it if granted or uncertain). */
  decline(): HandoverOutcome | undefined {
    this.declined = true;
    return this.outcome;
  }
}
