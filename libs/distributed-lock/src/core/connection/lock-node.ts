import type { RedisPort } from '../redis/redis-port.js';
import { LATE_REPLY, NOT_AFTER, type AnyLockScript, type LockScript, type ScriptArgument } from '../scripts/lock-script.js';
import type { ScriptBatch } from '../scripts/script-batch.js';
import type { Clock } from '../util/clock.js';
import { hashedPart } from '../util/key-slot.js';
import { OperationDeadlines } from '../util/operation-deadlines.js';
import { CircuitBreaker, type CircuitBreakerSettings, type CircuitChange } from './circuit-breaker.js';
import { NodeClock } from './node-clock.js';
import type { PubSubSelector } from './pubsub-selector.js';

/** Thrown when a guarded script was not run because its caller can no longer be waiting for it (see NodeClock). */
export class LateOperation extends Error {}

/**
 * Most operations one batch call carries; a longer queue is sent as several. A batch is one script run,
 * during which Redis serves nobody else: 128 fair-lock attempts over queues of 100 waiters ran for
 * 10 ms (Redis's slow log, test/board/board-scale); 32 keeps such a run near 2.5 ms.
 */
const MAX_BATCH = 32;

/** How a LockNode runs its scripts. */
export interface LockNodeOptions {
  /** Where, for error messages. */
  readonly target: string;
  /**
   * How long callers wait for a script's reply at most (the operation timeout): a guarded script
   * refuses to run later than that after it was sent.
   */
  readonly timeoutMs: number;
  /** The scripts that may travel together (none: every call alone). */
  readonly batch?: ScriptBatch;
  /**
   * The pub/sub choice, which the first script calls wait for (`pending()`: nothing once it is made),
   * so that a lock taken by the first call is released with the right publish command.
   */
  readonly pubsub?: Pick<PubSubSelector, 'pending'>;
  /**
   * A batch carries the calls of one hash slot only (always so on a cluster client; see
   * LockClientOptions.oneSlotPerScript for servers that shard behind one endpoint).
   */
  readonly oneSlotPerScript?: boolean;
  readonly clock: Clock;
  /** Refuse calls at once after failures in a row, until a probe gets a reply (see CircuitBreaker); none: every call is sent. */
  readonly circuitBreaker?: CircuitBreakerSettings;
  /** Told of each change of the circuit's state. */
  readonly circuitChanged?: (change: CircuitChange) => void;
}

/** A script call waiting for the end of the turn (see LockNode.run). */
interface QueuedCall {
  readonly script: AnyLockScript;
  readonly keys: string[];
  readonly argv: ScriptArgument[];
  /** Cluster slot grouping: the `{hash tag}` every key of one lock carries. */
  readonly tag: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * One place lock state lives (the only one, or one of RedLock's independent masters), where its
 * scripts run.
 *
 * Group commit: while earlier calls still wait for their replies, the script calls issued meanwhile
 * wait for the end of the current turn of the event loop, and then travel together, as one batch
 * script call (ScriptBatch) per cluster slot: one socket write, one EVALSHA, one reply for all of
 * them. Each caller still gets its own reply (or error). A call made while nothing is in flight is sent
 * at once, alone, so a lone caller waits for nothing. Calls run in the order they were made.
 */
export class LockNode {
  /** The server's clock, for the deadline of guarded scripts. */
  readonly clock: NodeClock;
  private queue: QueuedCall[] = [];
  private flushScheduled = false;
  /** Script calls sent whose replies have not come back yet. */
  private inFlight = 0;
  private readonly flushQueue = (): void => this.flush();

  /** The connection the scripts run on, through the client port (ioredis or node-redis underneath). */
  readonly redis: RedisPort;
  readonly target: string;
  private readonly timeoutMs: number;
  private readonly batch: ScriptBatch | undefined;
  /** Until the pub/sub choice is made (at connect, or with lazyConnect at the first calls); then undefined: a choice is never unmade. */
  private pubsub: Pick<PubSubSelector, 'pending'> | undefined;
  private readonly oneSlotPerScript: boolean;
  /** This process's clock. */
  private readonly localClock: Clock;
  /** Refuses calls while this node fails (undefined: turned off). */
  readonly breaker: CircuitBreaker | undefined;
  /** The operation timeout of each call sent, for the breaker: no reply by then is a failure. */
  private readonly replyDeadlines: OperationDeadlines | undefined;

  constructor(redis: RedisPort, options: LockNodeOptions) {
    this.redis = redis;
    this.target = options.target;
    this.timeoutMs = options.timeoutMs;
    this.batch = options.batch;
    this.pubsub = options.pubsub;
    this.oneSlotPerScript = options.oneSlotPerScript ?? redis.isCluster;
    this.localClock = options.clock;
    this.clock = new NodeClock(() => redis.time(), options.clock);
    if (options.circuitBreaker) {
      const changed = options.circuitChanged ?? (() => undefined);
      this.breaker = new CircuitBreaker(options.circuitBreaker, options.clock, options.target, () => redis.ping(), options.timeoutMs, changed);
      this.replyDeadlines = new OperationDeadlines(options.timeoutMs, options.clock);
    }
  }

  /** Stops the breaker's timers (the client is closing). */
  stop(): void {
    this.breaker?.stop();
    this.replyDeadlines?.stop();
  }

  /**
   * The earliest local monotonic time at which this node's server may have read `serverMs` (a grant's
   * expiry, see NodeClock.localTimeOf); undefined while its clock is unknown, and always on a node made
   * of several servers (a cluster, or a service sharding behind one endpoint): a clock sample there may
   * come from another server than the one that wrote the time, so it bounds nothing.
   */
  localTimeOf(serverMs: number): number | undefined {
    return this.oneSlotPerScript ? undefined : this.clock.localTimeOf(serverMs);
  }

  /**
   * A lower bound of this node's server time now (NodeClock.serverTimeAtLeast); undefined while its
   * clock is unknown, and on a node made of several servers (see localTimeOf).
   */
  serverTimeAtLeast(): number | undefined {
    return this.oneSlotPerScript ? undefined : this.clock.serverTimeAtLeast();
  }

  /**
   * Runs `script` with `args` as EVALSHA (by the SHA1 the library computed), keys first, alone or in a
   * batch (see the class comment). A server that does not have the script yet (NOSCRIPT: new node,
   * restart, failover) gets it once as EVAL, which also caches it there (RedisPort.runScript). A plain
   * command rather than ioredis' generated method: that adds a promise and closures per call, and
   * inside a pipeline sends the whole Lua text every time. Key prefixes and cluster slot routing apply
   * to EVALSHA's keys as to any command's.
   *
   * A guarded script gets its deadline from the time of this call, and the first ones wait for the
   * server's clock to be read; one whose wait before sending outlasted the operation timeout is not sent
   * at all (LateOperation): its caller has given up on it.
   *
   * While the node's circuit breaker is open, a call is refused at once (CommandNotSentError: not
   * sent, so not run), except a renewal (`script.renewal`): refused, it could lose a lease that Redis,
   * back meanwhile, would have renewed, so it is sent and waits for its reply as without a breaker.
   */
  run<A, R, Raw>(script: LockScript<A, R, Raw>, args: A): Promise<R> {
    if (this.breaker && !this.breaker.admits && !script.renewal) return Promise.reject(this.breaker.refusal(script.name));
    const calledAt = this.localClock.now();
    const choosing = this.pubsub?.pending();
    if (!choosing) this.pubsub = undefined;
    const waiting = choosing ?? (script.guarded && !this.clock.known && !script.clockFree?.(args) ? this.clock.sample() : undefined);
    if (!waiting) return this.submit(script, args, calledAt);
    // For the breaker, a call that waits for the node (its clock's TIME: one sample serves every waiting
    // call) counts as sent: no progress within the operation timeout is a failure, so an outage that
    // starts with the clock unknown (a new connection) still opens the circuit.
    const watched = this.watchReply();
    if (watched) void waiting.then(() => watched('cancel'));
    return waiting.then(async () => {
      if (script.guarded && !this.clock.known) await this.clock.sample();
      if (script.guarded && this.localClock.now() - calledAt >= this.timeoutMs)
        throw new LateOperation(`${script.name} was not sent: no reply was possible within ${this.timeoutMs} ms`);
      return this.submit(script, args, calledAt);
    });
  }

  private submit<A, R, Raw>(script: LockScript<A, R, Raw>, args: A, calledAt: number): Promise<R> {
    const keys = script.keys(args);
    // The guard's deadline goes last (concat: an array of the exact length; a push would grow the
    // script's array to half again plus 16 slots, on every guarded call).
    const argv = script.guarded
      ? script.argv(args).concat(script.clockFree?.(args) ? NOT_AFTER : `${NOT_AFTER}${this.clock.notAfter(calledAt, this.timeoutMs) ?? ''}`)
      : script.argv(args);
    if (!this.batch?.has(script) || (this.inFlight === 0 && this.queue.length === 0)) {
      if (this.queue.length > 0) this.flush(); // what this turn queued was called first: it goes first
      return this.sendNow(script, keys, argv);
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ script, keys, argv, tag: keys[0] === undefined ? '' : hashedPart(keys[0]), resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        this.localClock.soon(this.flushQueue);
      }
    });
  }

  /** Sends what the turn queued: alone if it is one call, else in batches (one per `{hash tag}` when scripts keep to one slot). */
  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return; // flushed early (see submit)
    const queued = this.queue;
    this.queue = [];
    if (queued.length === 1) return this.sendAlone(queued[0]!);
    if (!this.oneSlotPerScript && !this.redis.isCluster) {
      for (let i = 0; i < queued.length; i += MAX_BATCH) this.sendBatch(queued.slice(i, i + MAX_BATCH));
      return;
    }
    const bySlot = new Map<string, QueuedCall[]>();
    for (const call of queued) {
      const group = bySlot.get(call.tag);
      if (group) group.push(call);
      else bySlot.set(call.tag, [call]);
    }
    for (const group of bySlot.values()) {
      for (let i = 0; i < group.length; i += MAX_BATCH) {
        const part = group.slice(i, i + MAX_BATCH);
        if (part.length === 1) this.sendAlone(part[0]!);
        else this.sendBatch(part);
      }
    }
  }

  /** A queued call that travels alone after all. */
  private sendAlone(call: QueuedCall): void {
    this.sendNow(call.script, call.keys, call.argv).then(call.resolve, call.reject);
  }

  /**
   * Sends one script call now; its promise is the reply's, parsed. The hot path of a lone caller: no
   * promise or queue entry of its own besides the port's (each acquire and release of a free lock
   * goes this way).
   */
  private sendNow<R>(script: AnyLockScript, keys: string[], argv: ScriptArgument[]): Promise<R> {
    this.inFlight += 1;
    const replied = this.watchReply();
    return this.redis.runScript(script, keys, argv).then(
      (raw) => {
        this.inFlight -= 1;
        replied?.(undefined);
        return script.parse(raw) as R;
      },
      (error: unknown) => {
        this.inFlight -= 1;
        replied?.(error);
        throw this.late(error);
      },
    );
  }

  private sendBatch(calls: QueuedCall[]): void {
    const batch = this.batch!;
    const { keys, argv } = batch.argsOf(calls);
    this.inFlight += 1;
    const replied = this.watchReply(calls.length);
    this.redis.runScript(batch, keys, argv).then(
      (raws) => {
        this.inFlight -= 1;
        replied?.(undefined);
        const replies = raws as unknown[];
        calls.forEach((call, i) => {
          const raw = replies[i];
          if (raw instanceof Error) call.reject(this.late(raw));
          else call.resolve(call.script.parse(raw));
        });
      },
      (error: unknown) => {
        this.inFlight -= 1;
        replied?.(error);
        for (const call of calls) call.reject(error);
      },
    );
  }

  /**
   * For the breaker: watches one command sent (`calls` calls: a batch carries several, and each of
   * them fails with it), which fails if no reply comes within the operation timeout
   * (one shared deadline timer, see OperationDeadlines). Returns what to call with the call's outcome
   * (undefined: a reply; 'cancel': none to count; else its error: an error reply still counts as a
   * reply, the node answered).
   * A reply after the deadline changes nothing: the failure was counted.
   */
  private watchReply(calls = 1): ((error: unknown) => void) | undefined {
    const { breaker, replyDeadlines } = this;
    if (!breaker || !replyDeadlines) return undefined;
    const ticket = breaker.sent();
    let expired = false;
    const entry = replyDeadlines.track(() => {
      expired = true;
      breaker.failed(ticket, new Error(`no reply within ${this.timeoutMs} ms`), calls);
    });
    return (error) => {
      if (expired) return;
      replyDeadlines.done(entry);
      if (error === 'cancel') return;
      if (error === undefined || this.redis.isReplyError(error)) breaker.succeeded(ticket);
      else breaker.failed(ticket, error instanceof Error ? error : new Error(String(error)), calls);
    };
  }

  /** A guarded script's refusal (`DLOCK_LATE <server ms>`) teaches the clock and becomes LateOperation; other errors pass. */
  private late(error: unknown): unknown {
    if (error instanceof Error && error.message.startsWith(LATE_REPLY)) {
      const serverMs = Number(error.message.slice(LATE_REPLY.length + 1));
      if (Number.isFinite(serverMs)) this.clock.observe(serverMs, this.localClock.now());
      return new LateOperation(`Redis would have run it after its caller's operation timeout (${this.timeoutMs} ms), so it changed nothing`);
    }
    return error;
  }

  /**
   * `WAIT replicas timeout` on the connection that wrote `key`: how many replicas have every write
   * that connection sent so far (in a cluster, the master of the key's slot).
   */
  waitForReplicas(key: string, replicas: number, timeoutMs: number): Promise<number> {
    return this.redis.waitForReplicas(key, replicas, timeoutMs);
  }
}
