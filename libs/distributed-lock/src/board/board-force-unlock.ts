import type { InspectedLockKind, LockClient, LockHolderInfo, LockInspection } from '../core/index.js';
import type { DistributedLockBoardEvents } from './board.events.js';

const KINDS: readonly InspectedLockKind[] = ['reentrant', 'fair', 'read-write'];

/** What a force-unlock request asks for, as the confirmation page received it. */
export interface ForceUnlockRequest {
  readonly name: string;
  readonly kind: InspectedLockKind;
  /** The tokens the confirmation page named (comma-separated): the removal goes ahead only if they are still the ones held. */
  readonly tokens: string;
}

export type ForceUnlockOutcome =
  | { readonly outcome: 'removed'; readonly tokens: number[]; readonly holders: string[] }
  | { readonly outcome: 'not-held' | 'changed' | 'already-free'; readonly inspection: LockInspection };

/** The holders a force-unlock removes: the holder, or the writer and every reader. */
export function holdersOf(inspection: LockInspection): LockHolderInfo[] {
  return [...(inspection.holder ? [inspection.holder] : []), ...inspection.readers];
}

/** The tokens a force-unlock removes, as the confirmation names them. */
export function tokensOf(inspection: LockInspection): string {
  return holdersOf(inspection)
    .map((holder) => holder.token)
    .join(',');
}

/** The kinds the page may force-unlock (a semaphore's permits come back through releases and lease ends). */
export function isUnlockableKind(kind: string | undefined): kind is InspectedLockKind {
  return KINDS.includes(kind as InspectedLockKind);
}

/**
 * Force-unlock from the page, only when the board's `forceUnlock` option is on: removes the lock only
 * if the tokens the confirmation page showed are still the ones held (a lock that changed hands since
 * is left alone), through the lock objects' own `forceUnlock` (which wakes a waiter), then logs it and
 * emits `force-unlock`. Between the check and the removal a new holder could come in: the window is
 * one round trip, and the log names the tokens removed.
 */
export class BoardForceUnlock {
  constructor(
    private readonly locks: LockClient,
    private readonly events: DistributedLockBoardEvents,
    private readonly log: (message: string) => void,
  ) {}

  async inspect(name: string, kind: InspectedLockKind): Promise<LockInspection> {
    return this.locks.inspect(name, kind);
  }

  async execute(request: ForceUnlockRequest, remoteAddress: string | undefined): Promise<ForceUnlockOutcome> {
    const inspection = await this.locks.inspect(request.name, request.kind);
    if (!inspection.locked) return { outcome: 'not-held', inspection };
    if (tokensOf(inspection) !== request.tokens) return { outcome: 'changed', inspection };
    const holders = holdersOf(inspection);
    const removed = await this.lockOf(request.name, request.kind).forceUnlock();
    if (!removed) return { outcome: 'already-free', inspection };
    const tokens = holders.map((holder) => holder.token);
    const labels = holders.map((holder) => holder.instance.label);
    this.log(
      `Lock "${request.name}" (${request.kind}) was force-unlocked from the lock board${remoteAddress ? ` (request from ${remoteAddress})` : ''}: removed token${tokens.length === 1 ? '' : 's'} ${tokens.join(', ')} held by ${labels.join(', ')}.`,
    );
    this.events.emit('force-unlock', { name: request.name, kind: request.kind, tokens, holders: labels, remoteAddress });
    return { outcome: 'removed', tokens, holders: labels };
  }

  private lockOf(name: string, kind: InspectedLockKind): { forceUnlock(): Promise<boolean> } {
    if (kind === 'fair') return this.locks.getFairLock(name);
    if (kind === 'read-write') return this.locks.getReadWriteLock(name).writeLock(); // removes the writer and every reader
    return this.locks.getLock(name);
  }
}
