/**
 * The replies the lock scripts share, as their callers read them. Each script's wrapper parses its raw
 * reply with one of these (LockScript.parse), so no caller decodes a bare number.
 */

/** What one attempt to acquire came to. */
export type AttemptReply =
  /** Acquired: the lock's fencing token, and the owner's holds now (more than 1: re-entered). */
  | { readonly acquired: true; readonly token: number; readonly holds: number }
  /** Not acquired: the ms until the lock's state can change (the holder's remaining lease). */
  | { readonly acquired: false; readonly ttl: number };

/** `{token, holds}` when acquired (token > 0), `{0, ttl}` when not. */
export function parseAttempt([first, second]: [number, number]): AttemptReply {
  return first > 0 ? { acquired: true, token: first, holds: second } : { acquired: false, ttl: second };
}

/** What one release of one owner's holds came to. */
export type ReleaseReply =
  /**
   * `remaining` holds are left (0: the owner holds nothing any more). `toAnotherProcess`: the last hold
   * went and the release granted the lock to another waiting process (for the hand-over metrics).
   */
  | { readonly outcome: 'released'; readonly remaining: number; readonly toAnotherProcess: boolean }
  /** The owner does not hold it (its lease ran out, or it was force-unlocked): nothing changed. */
  | { readonly outcome: 'not-owner' }
  /** With expected holds: they differed, so an earlier release whose reply was lost went through; nothing changed. */
  | { readonly outcome: 'already-applied' };

/** The release scripts' codes: -1 not the owner, -2 already applied, -3 released and granted to another process, else the holds left. */
export function parseRelease(raw: number): ReleaseReply {
  if (raw === -1) return NOT_OWNER;
  if (raw === -2) return ALREADY_APPLIED;
  if (raw === -3) return GRANTED_ELSEWHERE;
  return raw === 0 ? RELEASED : { outcome: 'released', remaining: raw, toAnotherProcess: false };
}

const NOT_OWNER: ReleaseReply = { outcome: 'not-owner' };
const ALREADY_APPLIED: ReleaseReply = { outcome: 'already-applied' };
const GRANTED_ELSEWHERE: ReleaseReply = { outcome: 'released', remaining: 0, toAnotherProcess: true };
const RELEASED: ReleaseReply = { outcome: 'released', remaining: 0, toAnotherProcess: false };

/** 1 / 0 replies (renewed, deleted, passed on...). */
export function parseFlag(raw: number): boolean {
  return raw === 1;
}
