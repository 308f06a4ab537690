import type { Clock } from '../util/clock.js';

/** A sample older than this is taken again (in the background, by the next operation that needs the clock). */
const RESAMPLE_MS = 10_000;
/** The tightest bound is kept for this long; after it, a fresh sample replaces it (the two clocks drift apart slowly). */
const KEEP_BEST_MS = 30_000;

/**
 * What this process knows of one Redis server's clock: a lower bound of `offset`, the server's time
 * (ms since the epoch, as its TIME command reads it) minus this process's monotonic clock.
 *
 * It exists so that an operation Redis runs late runs not at all. A lock operation given up by its
 * caller (no reply within the operation timeout) may still reach Redis later: a reconnect or a
 * cluster's retry re-sends it, or a NOSCRIPT reply sends it again as EVAL behind what was sent since.
 * Run then, an acquisition would leave a hold its owner does not know of, and a release could drop a
 * hold taken after it. So each such operation carries the latest server time at which it may still
 * run (`notAfter`), and the script refuses to run past it (see GUARD_LUA in lock-script.ts).
 *
 * The bound: a TIME reply read at local time `r` says `t`; the server read it at some local time at or
 * before `r`, so `offset >= t - r`. An operation sent at local time `s` is given up at `s + timeout` at
 * the earliest; if Redis runs it after that, the server's clock then reads more than
 * `s + timeout + offset >= s + timeout + (t - r)`, which is its `notAfter`. So whatever runs after its
 * caller gave up is refused, whatever the round trips cost. What this needs: the server's clock does not
 * step back (a step forward only refuses operations early, which their callers see as failures), and,
 * in a cluster or after a failover, the server that runs the operation reads the same time as the one
 * sampled, within what NTP keeps (milliseconds); a server behind by d lets through what runs up to d
 * late, which the release of a late grant then gives back (see Acquisition).
 */
export class NodeClock {
  /** The lower bound of the offset in use, and when it was taken (local monotonic ms). */
  private offset: number | undefined;
  private offsetAt = -Infinity;
  /** An upper bound of the offset (see localTimeOf), and when it was taken. */
  private offsetMax: number | undefined;
  private offsetMaxAt = -Infinity;
  private sampledAt = -Infinity;
  private sampling: Promise<void> | undefined;

  /** `time`: the server's TIME command (seconds and microseconds, as strings); `clock`: this process's. */
  constructor(
    private readonly time: () => Promise<readonly (string | number)[]>,
    private readonly clock: Clock,
  ) {}

  /** Whether the server's clock is known (a first sample came back). */
  get known(): boolean {
    return this.offset !== undefined;
  }

  /**
   * The latest server time (whole ms) at which an operation sent at local time `sentAt`, and given up
   * `timeoutMs` after it at the earliest, may still run; undefined while the server's clock is unknown.
   * Starts a new sample in the background when the last one is old.
   */
  notAfter(sentAt: number, timeoutMs: number): number | undefined {
    if (sentAt - this.sampledAt > RESAMPLE_MS) void this.sample();
    return this.offset === undefined ? undefined : Math.floor(sentAt + timeoutMs + this.offset);
  }

  /** A lower bound of the server's time now (whole ms), or undefined while its clock is unknown. */
  serverTimeAtLeast(): number | undefined {
    return this.offset === undefined ? undefined : Math.floor(this.clock.now() + this.offset);
  }

  /**
   * The earliest local monotonic time at which the server's clock may have read `serverMs`, or
   * undefined while no sample bounds it. A TIME request sent at local time `s` that replies `t` was read
   * by the server at or after `s`, so `offset <= t - s` (plus one: TIME's milliseconds are rounded
   * down), and the server read `serverMs` at local time `serverMs - offset >= serverMs - (t - s + 1)`.
   * A deadline in server time (a grant's expiry) converted so is never later than the server's.
   */
  localTimeOf(serverMs: number): number | undefined {
    return this.offsetMax === undefined ? undefined : serverMs - this.offsetMax;
  }

  /** Reads the server's clock once (one at a time); never rejects: a failed sample changes nothing. */
  sample(): Promise<void> {
    this.sampling ??= (async () => {
      try {
        const sentAt = this.clock.now();
        this.sampledAt = sentAt;
        const [seconds, micros] = await this.time();
        const serverMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
        const upper = serverMs + 1 - sentAt;
        const readAt = this.clock.now();
        if (this.offsetMax === undefined || upper < this.offsetMax || readAt - this.offsetMaxAt > KEEP_BEST_MS) {
          this.offsetMax = upper;
          this.offsetMaxAt = readAt;
        }
        this.observe(serverMs, readAt);
      } catch {
        this.sampledAt = -Infinity; // Redis did not answer: the next operation asks again
      } finally {
        this.sampling = undefined;
      }
    })();
    return this.sampling;
  }

  /** Forgets the samples (a new connection may lead to another server): the next operation samples again. */
  reset(): void {
    this.sampledAt = -Infinity;
    this.offsetAt = -Infinity;
    this.offsetMax = undefined; // no deadline is converted with another server's bound
  }

  /** The server's time `serverMs`, in a reply read at local time `readAt`: a lower bound of the offset. */
  observe(serverMs: number, readAt: number): void {
    const bound = serverMs - readAt;
    if (this.offset === undefined || bound > this.offset || readAt - this.offsetAt > KEEP_BEST_MS) {
      this.offset = bound;
      this.offsetAt = readAt;
    }
  }
}
