import { LockClient } from '../../distributed-lock/src/core/lock-client.js';
import type { CallingProcess } from './calls.js';
import type { HoldingProcess } from './holds.js';
import type { EventOwner } from './scheduler.js';
import { ProcessClock } from './sim-clock.js';
import type { Link } from './sim-link.js';
import { SimPort } from './sim-port.js';
import type { SimWorld } from './sim-world.js';

/**
 * One simulated application process: a real LockClient, on its own clock and its own connections
 * to the simulated server. It can be paused (its timers and its incoming messages wait; its clock
 * runs on, as after SIGSTOP) and killed (nothing of it runs again; what it held is left to expire).
 */
export class SimProcess implements EventOwner, HoldingProcess, CallingProcess {
  pausedUntil = 0;
  dead = false;
  readonly pauses: [number, number][] = [];
  readonly clock: ProcessClock;
  readonly client: LockClient;
  readonly links: Link[] = [];
  /** Its client was closed before the end of the run (see FaultMix.closes): its callers stop. */
  closed = false;
  /**
   * Its close() gave up on work Redis had not answered within its bound, and said so (a
   * `background-error` of operation `close`, as documented): what that work would have released may
   * stay for its lease. How long that close() took, in virtual ms.
   */
  closeGaveUp = false;
  closeTookMs = 0;

  constructor(
    readonly world: SimWorld,
    readonly name: string,
    rate: number,
  ) {
    const { config, scheduler, prng } = world;
    this.clock = new ProcessClock(scheduler, this, rate, prng.between(0, 1e6), prng.between(-5, 5));
    const ports = world.servers.map((server) => {
      const command = world.link(this, server, 'command', true);
      this.links.push(command);
      return new SimPort(command, (role, connected) => {
        const link = world.link(this, server, role, connected);
        this.links.push(link);
        return link;
      });
    });
    this.client = new LockClient({
      client: ports.length === 1 ? ports[0]! : ports,
      clock: this.clock,
      clientId: name,
      operationTimeout: config.operationTimeoutMs,
      watchdogTimeout: config.watchdogTimeoutMs,
      handoverTurn: config.handoverTurnMs,
      env: {},
      metrics: false,
    });
  }

  /** Closes its client (see closeGaveUp); once: a second call waits for the first. */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private closing: Promise<void> | undefined;

  private async closeOnce(): Promise<void> {
    const { scheduler } = this.world;
    const from = scheduler.now;
    this.client.events.on('background-error', (event) => {
      if (event.operation === 'close') this.closeGaveUp = true;
    });
    await this.client.close();
    this.closeTookMs = scheduler.now - from;
  }

  virtualTimeOf(localMs: number): number {
    return this.clock.virtualTimeOf(localMs);
  }

  /** Runs `fn` as an event of this process (it waits while paused, never runs once dead). */
  soon(fn: () => void): void {
    this.world.scheduler.after(0, fn, this);
  }

  pause(forMs: number): void {
    if (this.dead) return;
    const from = this.world.scheduler.now;
    const to = Math.max(this.pausedUntil, from + forMs);
    this.pausedUntil = to;
    this.pauses.push([from, to]);
    this.world.log.line(this.name, `PAUSED until ${to.toFixed(3)}`);
  }

  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.world.log.line(this.name, 'KILLED');
    for (const link of this.links) link.abandon();
  }
}
