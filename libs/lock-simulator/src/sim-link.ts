import type { MemorySubscriber } from '../../distributed-lock/src/memory/memory-keyspace.js';
import type { Prng } from './prng.js';
import type { EventOwner, Scheduler } from './scheduler.js';
import type { Command, SimServer } from './sim-server.js';
import type { SimLog } from './sim-log.js';

/** How the network between the processes and the servers behaves in one run (all drawn from its seed). */
/** How long a link holds one request back (a fault aimed at it), on its way there and on its reply's way back. */
export interface Stall {
  readonly requestMs?: number;
  readonly replyMs?: number;
  /** The link is reset right after the server ran the request, its reply lost (why, for the story). */
  readonly resetAfterRun?: string;
}

export interface NetworkProfile {
  /** Mean one-way delay, ms. */
  readonly meanDelayMs: number;
  /** Chance that a message is held up for `spikeMs` (a stall: everything behind it on the link waits too). */
  readonly spikeChance: number;
  readonly spikeMs: number;
  /** Chance that a pub/sub message is lost, and that it is late by up to `pubsubLateMs`. */
  readonly pubsubLossChance: number;
  readonly pubsubLateChance: number;
  readonly pubsubLateMs: number;
  /** On a reset, chance that a request in flight is sent again after the reconnect (ioredis does) rather than failed. */
  readonly resendChance: number;
  /** Commands issued while reconnecting wait for the connection (ioredis' offline queue) rather than fail. */
  readonly offlineQueue: boolean;
  /** Pause before a reconnect attempt, ms. */
  readonly reconnectMs: number;
  /** Set once the calm begins: from then on no message is lost, late or stalled. */
  calm: boolean;
  /**
   * In the calm, the longest a message takes one way: a healthy network is one whose round trips fit
   * the timeouts the configuration states (with RedLock, the time an attempt waits for a master).
   */
  readonly calmMaxDelayMs: number;
}

type Listener = (error?: Error) => void;

interface Request {
  readonly id: number;
  readonly command: Command;
  readonly label: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** Why a command failed on the client side without a reply (a network failure, not a reply error). */
export class ConnectionLost extends Error {}

/**
 * One TCP connection between a simulated process and a simulated server. Each direction is FIFO, as
 * TCP is: a message is delivered after a delay drawn from the seed, never before one sent earlier on
 * the same link. Connections do not wait for each other, so replies on two links, or a reply and a
 * pub/sub message, arrive in any order. A reset loses what is in flight: a request not yet run is
 * failed or, like ioredis, sent again after the reconnect (it may then run long after its caller gave
 * up: a late operation); a reply not yet delivered is lost, and its request failed or run again.
 */
export class Link implements MemorySubscriber {
  status: 'wait' | 'connecting' | 'ready' | 'reconnecting' | 'end';
  private epoch = 0;
  /** The epoch in which the link was abandoned (see abandon), if it was. */
  private abandonEpoch = -1;
  private nextId = 0;
  private toServerAt = 0;
  private toClientAt = 0;
  /** Sent and not yet answered (or failed), by id. */
  private readonly inFlight = new Map<number, Request>();
  /** Issued while reconnecting (offline queue) or kept for resending after a reset. */
  private queued: Request[] = [];
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Channels the client subscribed on this link (re-subscribed after a reconnect, as ioredis does). */
  readonly channels = new Set<string>();
  /** Channels the server has for this connection (a reset drops them all, as Redis does). */
  private readonly serverChannels = new Set<string>();
  private messageListener: ((channel: string, message: string) => void) | undefined;
  /**
   * Told of each request as it leaves for the server (a fault aimed at that moment: see aimFaults);
   * answers how long the link stalls before the request goes, and before its reply comes back.
   */
  onTransmit: ((label: string) => Stall | undefined) | undefined;
  private resubscribedListener: (() => void) | undefined;

  constructor(
    readonly name: string,
    readonly server: SimServer,
    private readonly scheduler: Scheduler,
    private readonly owner: EventOwner,
    private readonly prng: Prng,
    private readonly profile: NetworkProfile,
    private readonly log: SimLog,
    connected: boolean,
  ) {
    this.status = connected ? 'ready' : 'wait';
  }

  // --- events (as a client library emits them) ------------------------------------------------------

  on(event: string, listener: Listener): void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener);
  }

  off(event: string, listener: Listener): void {
    this.listeners.get(event)?.delete(listener);
  }

  onMessage(listener: (channel: string, message: string) => void): void {
    this.messageListener = listener;
  }

  onResubscribed(listener: () => void): void {
    this.resubscribedListener = listener;
  }

  private emit(event: string, error?: Error): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) listener(error);
  }

  // --- life cycle ------------------------------------------------------------------------------------

  /** Connects a new link, or, as ioredis does, one the client closed (not one whose process died). */
  connect(): Promise<void> {
    if (this.status === 'ready') return Promise.resolve();
    if (this.status === 'wait' || (this.status === 'end' && this.abandonEpoch < 0)) {
      this.status = 'connecting';
      this.scheduleReconnect(this.delay());
    }
    return new Promise((resolve, reject) => {
      const onReady = (): void => {
        this.off('ready', onReady);
        this.off('end', onEnd);
        resolve();
      };
      const onEnd = (): void => {
        this.off('ready', onReady);
        this.off('end', onEnd);
        reject(new ConnectionLost(`${this.name}: connection closed`));
      };
      this.on('ready', onReady);
      this.on('end', onEnd);
    });
  }

  /** Closes the link for good (the client closed it, or its process died). */
  close(): void {
    if (this.status === 'end') return;
    this.status = 'end';
    this.epoch++;
    this.dropSubscriptions();
    const failed = [...this.inFlight.values(), ...this.queued];
    this.inFlight.clear();
    this.queued = [];
    for (const request of failed) request.reject(new ConnectionLost(`${this.name}: Connection is closed.`));
    this.emit('end');
  }

  /**
   * Its process died: nothing reaches the process any more (its pending calls never settle: nothing of
   * it runs again), and the server drops the connection, with its subscriptions, once what was already
   * on the way to it has arrived (the kernel sends what was written before the socket closes).
   */
  abandon(): void {
    if (this.status === 'end') return;
    this.status = 'end';
    this.abandonEpoch = this.epoch;
    this.epoch++;
    this.inFlight.clear();
    this.queued = [];
    this.scheduler.at(this.toServerAt, () => this.dropSubscriptions());
  }

  /** A reset: what is in flight is lost (see the class comment); the link reconnects after a pause. */
  reset(why: string): void {
    if (this.status === 'end' || this.status === 'wait') return;
    this.log.line(this.name, `reset (${why})`);
    this.epoch++;
    this.dropSubscriptions();
    const kept: Request[] = [];
    for (const request of this.inFlight.values()) {
      if (this.prng.chance(this.profile.resendChance)) kept.push(request);
      else request.reject(new ConnectionLost(`${this.name}: connection reset`));
    }
    this.inFlight.clear();
    this.queued = [...kept, ...this.queued];
    if (this.status === 'ready') {
      this.status = 'reconnecting';
      this.emit('error', new ConnectionLost(`${this.name}: connection reset (${why})`));
    }
    this.scheduleReconnect(this.profile.reconnectMs);
  }

  // --- commands --------------------------------------------------------------------------------------

  send(command: Command, label: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const request: Request = { id: this.nextId++, command, label, resolve, reject };
      if (this.status === 'ready') return this.transmit(request);
      if (this.status === 'end') return reject(new ConnectionLost(`${this.name}: Connection is closed.`));
      if (this.status === 'wait') return reject(new ConnectionLost(`${this.name}: not connected`));
      if (!this.profile.offlineQueue) return reject(new ConnectionLost(`${this.name}: connection is ${this.status}, offline queue disabled`));
      this.queued.push(request);
    });
  }

  private transmit(request: Request): void {
    const epoch = this.epoch;
    this.inFlight.set(request.id, request);
    const stall = this.onTransmit?.(request.label);
    this.toServerAt = Math.max(this.scheduler.now + this.delay() + (stall?.requestMs ?? 0), this.toServerAt);
    this.scheduler.at(this.toServerAt, () => {
      if ((this.epoch !== epoch && !this.abandonedAt(epoch)) || !this.server.up) return; // lost on the way (reset): never ran
      let reply: unknown;
      let failed = false;
      const { command } = request;
      if (command.kind === 'subscribe') this.serverChannels.add(command.channel);
      else if (command.kind === 'unsubscribe') this.serverChannels.delete(command.channel);
      try {
        reply = this.server.execute(command);
      } catch (error) {
        reply = error;
        failed = true;
      }
      this.log.line(
        this.name,
        `${request.label} ran on ${this.server.name}${failed ? `: ${(reply as Error).message.slice(0, 60)}` : ` -> ${replyText(reply)}`}`,
      );
      if (stall?.resetAfterRun !== undefined) return this.reset(stall.resetAfterRun);
      this.toClientAt = Math.max(this.scheduler.now + this.delay() + (stall?.replyMs ?? 0), this.toClientAt);
      this.scheduler.at(
        this.toClientAt,
        () => {
          if (this.epoch !== epoch || !this.inFlight.delete(request.id)) return; // the reply was lost
          if (failed) request.reject(reply as Error);
          else request.resolve(reply);
        },
        this.owner,
        true,
      );
    });
  }

  // --- pub/sub -------------------------------------------------------------------------------------------

  /** Called by the server's keyspace for a message on a channel this link subscribed to. */
  deliver(channel: string, message: string): void {
    if (this.status !== 'ready') return;
    const { calm } = this.profile;
    if (!calm && this.prng.chance(this.profile.pubsubLossChance)) {
      this.log.line(this.name, `message lost: ${channel} ${message}`);
      return;
    }
    const epoch = this.epoch;
    const late = !calm && this.prng.chance(this.profile.pubsubLateChance) ? this.prng.between(0, this.profile.pubsubLateMs) : 0;
    this.toClientAt = Math.max(this.scheduler.now + this.delay() + late, this.toClientAt);
    this.scheduler.at(
      this.toClientAt,
      () => {
        if (this.epoch !== epoch) return;
        this.log.line(this.name, `heard ${channel} ${message}`);
        this.messageListener?.(channel, message);
      },
      this.owner,
      true,
    );
  }

  async subscribe(channel: string): Promise<void> {
    await this.send({ kind: 'subscribe', channel, subscriber: this }, `SUBSCRIBE ${channel}`);
    this.channels.add(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.channels.delete(channel);
    await this.send({ kind: 'unsubscribe', channel, subscriber: this }, `UNSUBSCRIBE ${channel}`);
  }

  private dropSubscriptions(): void {
    for (const channel of this.serverChannels) this.server.keyspace.unsubscribe(channel, this);
    this.serverChannels.clear();
  }

  // --- reconnecting ------------------------------------------------------------------------------------

  private scheduleReconnect(afterMs: number): void {
    const epoch = this.epoch;
    this.scheduler.after(
      afterMs,
      () => {
        if (this.epoch !== epoch || this.status === 'end') return;
        if (!this.server.up) return this.scheduleReconnect(this.profile.reconnectMs);
        const resubscribe = this.channels.size > 0;
        this.status = 'ready';
        this.log.line(this.name, 'ready');
        // Subscriptions first (ioredis re-subscribes before anything queued), then what waited.
        for (const channel of this.channels) {
          this.server.keyspace.subscribe(channel, this);
          this.serverChannels.add(channel);
        }
        const waiting = this.queued;
        this.queued = [];
        for (const request of waiting) this.transmit(request);
        this.emit('ready');
        if (resubscribe) this.resubscribedListener?.();
      },
      this.owner,
    );
  }

  /** Whether the link was abandoned right after `epoch` (its process died): what was sent then still arrives. */
  private abandonedAt(epoch: number): boolean {
    return this.status === 'end' && this.abandonEpoch === epoch;
  }

  /**
   * One message's delay: exponential around the mean, now and then stalled by a spike. In the calm no
   * spike, and no tail beyond three times the mean: a healthy network, against which the calm's
   * liveness is judged (an operation timeout there is the library's doing, not the network's).
   */
  private delay(): number {
    const base = this.prng.exponential(this.profile.meanDelayMs);
    if (this.profile.calm) return Math.min(base, 3 * this.profile.meanDelayMs, this.profile.calmMaxDelayMs);
    return this.prng.chance(this.profile.spikeChance) ? base + this.prng.between(0, this.profile.spikeMs) : base;
  }
}

/** A reply as one short line of the story. */
function replyText(reply: unknown): string {
  const text = JSON.stringify(reply) ?? String(reply);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
