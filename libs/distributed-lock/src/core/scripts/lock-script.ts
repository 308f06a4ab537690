import { createHash } from 'node:crypto';
import { helpersInOrder, type LuaHelper } from './lua-helper.js';
import { CLOCK_LUA } from './next-token.lua.js';
import { nameScript } from '../util/script-names.js';

export type ScriptArgument = string | number;

/** Which publish command notifications use: sharded pub/sub (SPUBLISH) in a Redis 7+ cluster. */
export type PublishCommand = 'publish' | 'spublish';

/**
 * One of the library's Lua scripts: its text, its SHA1 (computed here, for EVALSHA), and how a typed
 * arguments object becomes its KEYS and ARGV. `R` is the reply's type. Run with LockNode.run.
 *
 * On the lock path, write each call's arguments as a literal of named fields (or pass a prebuilt keys
 * object as one field, as the semaphore does); never spread a lock's keys object into them. V8 built
 * those spread objects slowly: the read lock and the semaphore spent about 40 % of their client CPU per
 * acquire + release on it (100 parallel callers: 89-96 us against 52-56 us per cycle, medians).
 */
export interface LockScript<A, R, Raw = unknown> {
  /** A name for error messages and test transcripts; prefixed to avoid clashes. */
  readonly name: string;
  /** The whole script: its guard (if guarded), its helpers, its body. */
  readonly lua: string;
  readonly sha: string;
  /** The Lua helpers the body calls, and the body itself (the parts a batch of scripts is made of, see ScriptBatch). */
  readonly helpers: readonly LuaHelper[];
  readonly body: string;
  keys(args: A): string[];
  argv(args: A): ScriptArgument[];
  /**
   * Refuses to run later than its caller may still wait for it (see GUARD_LUA): LockNode.run appends the
   * deadline, `not-after:<ms>`, as the last ARGV. For every script that changes who holds what.
   */
  readonly guarded: boolean;
  /**
   * For a guarded script: whether a call needs no deadline because the script checks something that a
   * late run would find changed (a release checks the fencing token of the hold it releases). Such a
   * call skips the guard's reading of the server's clock.
   */
  readonly clockFree?: (args: A) => boolean;
  /**
   * A lease renewal: sent even while its node's circuit breaker is open (see LockNode.run), so that
   * the breaker never loses a lease that an answering Redis would have renewed.
   */
  readonly renewal?: boolean;
  /** The script's reply as its callers read it (a typed outcome, never a bare -1/-2/-3 to decode). */
  parse(raw: Raw): R;
  /** Type only: what the script replies. */
  readonly reply?: R;
}

/** The error a guarded script replies with when it would run past its deadline, followed by the server's time (ms). */
export const LATE_REPLY = 'DLOCK_LATE';

/** How a guarded script's deadline argument starts (the rest is the server time in ms). */
export const NOT_AFTER = 'not-after:';

/**
 * The first lines of a guarded script (after the clock helper, see CLOCK_LUA). Its last ARGV is `not-after:<ms>`: the latest server time (ms
 * since the epoch) at which its caller may still be waiting for the reply (NodeClock.notAfter). Past
 * it, the script changes nothing and replies the error `DLOCK_LATE <server time in ms>`: its caller
 * gave up on it, so whatever it would take would be nobody's, and whatever it would release might be a
 * hold taken since. Without that argument (a caller that does not know the server's clock yet, or a
 * script run by hand), it runs unguarded. The body's ARGV numbering is unchanged (its arguments come
 * first), so LockNode always sends a guarded script its every argument.
 */
export const GUARD_LUA = `
local guard_arg = ARGV[#ARGV]
if guard_arg and string.sub(guard_arg, 1, ${NOT_AFTER.length}) == '${NOT_AFTER}' then
  local guard_not_after = tonumber(string.sub(guard_arg, ${NOT_AFTER.length + 1}))
  if guard_not_after and now_ms() >= guard_not_after then
    return redis.error_reply('${LATE_REPLY} ' .. string.format('%.0f', now_ms()))
  end
end
`;

/**
 * Defines a script: its body (`lua`) after the helpers it calls, KEYS and ARGV from a named-arguments
 * object, and the SHA1 of the whole text. `guarded`: the script starts with GUARD_LUA (see
 * LockScript.guarded).
 */
export function defineLockScript<A, R, Raw = R>(definition: {
  name: string;
  helpers?: readonly LuaHelper[];
  lua: string;
  keys: (args: A) => string[];
  argv: (args: A) => ScriptArgument[];
  guarded?: boolean;
  clockFree?: (args: A) => boolean;
  /** A lease renewal (see LockScript.renewal). */
  renewal?: boolean;
  /** Turns the raw reply into what callers read; without it the reply is passed as it is. */
  parse?: (raw: Raw) => R;
}): LockScript<A, R, Raw> {
  const guarded = definition.guarded === true;
  // A guarded script reads the server's clock (the guard): the clock helper comes first.
  const helpers = helpersInOrder(guarded ? [CLOCK_LUA, ...(definition.helpers ?? [])] : (definition.helpers ?? []));
  const body = definition.lua;
  const [clock, rest] = guarded ? [helpers[0]!.lua, helpers.slice(1)] : ['', helpers];
  const lua = `${clock}${guarded ? GUARD_LUA : ''}${rest.map((helper) => helper.lua).join('')}${body}`;
  const parse = definition.parse ?? ((raw: Raw) => raw as unknown as R);
  const renewal = definition.renewal === true;
  const script = { name: definition.name, keys: definition.keys, argv: definition.argv, lua, body, helpers, guarded, renewal, parse, sha: sha1(lua) };
  nameScript(script.sha, script.name); // for the in-memory store's strict-keys errors
  return definition.clockFree ? { ...script, clockFree: definition.clockFree } : script;
}

export function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** A script's name and text, and the SHA1 it runs by (for SCRIPT LOAD). */
export interface ScriptText {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

/** A lock script whose arguments and reply types are not known here (lists, registration). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLockScript = LockScript<any, unknown, any>;

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
