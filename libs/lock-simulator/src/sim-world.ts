import type { LuaVm } from '../../distributed-lock/src/memory/lua-vm.js';
import { Calls } from './calls.js';
import { aimFaults } from './faults.js';
import type { Family, Hold } from './holds.js';
import { Invariants } from './invariants.js';
import type { SimConfig } from './sim-config.js';
import type { Prng } from './prng.js';
import { Scheduler } from './scheduler.js';
import { Link, type NetworkProfile } from './sim-link.js';
import { SimLog } from './sim-log.js';
import type { SimProcess } from './sim-process.js';
import { SimServer, type ServerMutation } from './sim-server.js';
import { ServerView } from './server-view.js';

/** An owner whose last unlock succeeded: Redis must not list it again until it acquires again. */
interface Released {
  readonly family: Family;
  readonly name: string;
  readonly owner: string;
  readonly at: number;
  /** When the unlock began: its releases ran from then on (a multi-lock's, one lock after another). */
  readonly since: number;
}

/**
 * Everything one run is made of: virtual time, the servers, the processes, the network between them,
 * the story, and the judges (invariants and calls). One seed builds it (see SimConfig) and nothing
 * outside it changes it.
 */
export class SimWorld {
  readonly scheduler = new Scheduler();
  readonly log: SimLog;
  readonly invariants: Invariants;
  readonly calls: Calls;
  readonly servers: SimServer[];
  readonly processes: SimProcess[] = [];
  readonly view: ServerView;
  /** By lock name, then by family and owner. */
  private readonly released = new Map<string, Map<string, Released>>();
  /**
   * How long after an owner's last unlock its lock is watched for it: longer than anything of the
   * owner's still in the network could take to run (a stall, a reconnect and a resend), so that an
   * operation run late is seen (Map order is release order: the oldest are dropped first).
   */
  private readonly releasedWatchMs: number;

  constructor(
    readonly config: SimConfig,
    readonly prng: Prng,
    vm: LuaVm,
    mutation: ServerMutation | undefined,
    keepStory: boolean,
  ) {
    this.log = new SimLog(this.scheduler, keepStory);
    this.invariants = new Invariants(this.scheduler, this.log);
    this.calls = new Calls(this.scheduler, this.invariants, config.operationTimeoutMs);
    this.view = new ServerView(vm, 'lock:');
    this.releasedWatchMs = 10 * config.operationTimeoutMs + config.network.spikeMs + 10 * config.network.reconnectMs + 1000;
    const names = config.shape === 'redlock' ? ['redis-a', 'redis-b', 'redis-c'] : ['redis'];
    this.servers = names.map(
      (name) => new SimServer(name, this.scheduler, vm, prng.between(-2, 2), mutation, (server, keys) => this.afterScript(server, keys)),
    );
  }

  /** A connection of `process` to `server`; its own stream of randomness, so links do not disturb each other's draws. */
  link(process: SimProcess, server: SimServer, role: 'command' | 'subscriber', connected: boolean): Link {
    const where = this.servers.length > 1 ? `@${server.name.slice(-1)}` : '';
    const name = `${process.name}${role === 'command' ? '' : '~'}${where}`;
    const link = new Link(name, server, this.scheduler, process, this.prng.fork(), this.profileOf(process, server), this.log, connected);
    aimFaults(this, process, link);
    return link;
  }

  /** Whether `process` sits on the slower link (see SimConfig.slowLinkMs). */
  onSlowLink(process: SimProcess): boolean {
    return this.config.slowLinkMs > 0 && process.name === 'p1';
  }

  /**
   * The network between `process` and `server`: the run's, or a slower one on the slow link (with
   * RedLock, to the last master only: a master far away, which the others' quorum does without).
   */
  private profileOf(process: SimProcess, server: SimServer): NetworkProfile {
    const { network, slowLinkMs } = this.config;
    if (!this.onSlowLink(process) || (this.servers.length > 1 && server !== this.servers.at(-1))) return network;
    // The run's profile underneath: the calm, when it comes, is set there.
    return Object.create(network, { meanDelayMs: { value: slowLinkMs } }) as NetworkProfile;
  }

  /**
   * Holds whose call ended (withLock returned, a leader's term was over and its candidate resigned):
   * the library must release each, or know it lost (see callEnded).
   */
  readonly callsEnded: Hold[] = [];
  private readonly keptReported = new Set<Hold>();

  /**
   * The call that owned `hold` ended: once longer than a lease, a few round trips and a stall could
   * take (what a retried release may need), the library must no longer keep it: renewed by its
   * watchdog, it would be held for good with nobody left to release it. Checked again at the end.
   */
  callEnded(hold: Hold): void {
    this.callsEnded.push(hold);
    const { watchdogTimeoutMs, operationTimeoutMs, network } = this.config;
    const check = (): void => {
      if (hold.process.pausedUntil > this.scheduler.now) return void this.scheduler.at(hold.process.pausedUntil + 1, check); // it cannot act
      this.checkKept(hold);
    };
    this.scheduler.after(2 * watchdogTimeoutMs + 6 * operationTimeoutMs + network.spikeMs + 10 * network.reconnectMs + 1000, check);
  }

  checkKept(hold: Hold): void {
    if (!hold.kept || this.keptReported.has(hold)) return;
    this.keptReported.add(hold);
    this.invariants.violate('kept-after-call', `${hold.describe()}: its call ended long ago, and the library still keeps it`);
  }

  /** The holder's owner released its last hold, with an unlock begun at `since`: from now on Redis must not list it (see Invariants). */
  releasedLast(hold: Hold, since: number): void {
    const entry: Released = { family: hold.family, name: hold.name, owner: hold.owner, at: this.scheduler.now, since };
    let owners = this.released.get(hold.name);
    if (!owners) this.released.set(hold.name, (owners = new Map()));
    owners.set(`${hold.family}:${hold.owner}`, entry);
    for (const server of this.servers) this.checkReleased(server, entry);
  }

  /**
   * After a script: for each lock it touched, the owners released recently are looked for in its keys
   * (a set of the words they hold), and only one found there is checked with the inspection script.
   */
  private afterScript(server: SimServer, keys: readonly string[]): void {
    if (this.released.size === 0) return;
    const keepFrom = this.scheduler.now - this.releasedWatchMs;
    for (const key of keys) {
      const open = key.indexOf('{');
      const close = key.indexOf('}', open);
      if (open < 0 || close < 0) continue;
      const owners = this.released.get(key.slice(open + 1, close));
      if (!owners) continue;
      const words = server.keyspace.words(key);
      for (const [id, entry] of owners) {
        if (entry.at < keepFrom) owners.delete(id);
        else if (words.has(entry.owner)) this.checkReleased(server, entry);
      }
    }
  }

  /**
   * Whether Redis lists the owner after its unlock: on the server that ran a script (RedLock: on a
   * majority of the masters, counting the others as they are now: one master's leftover, a grant it
   * ran late, holds nothing, and expires with its lease).
   */
  private checkReleased(server: SimServer, entry: Released): void {
    const listed = (each: SimServer): boolean => each.up && this.view.holders(each, entry.family, entry.name).includes(entry.owner);
    // A failover to a replica that had not seen the release brings the hold back until its lease ends:
    // asynchronous replication's loss, not a late operation (see the guarantees); since the unlock
    // began, as a multi-lock's release of one lock may be lost before its unlock ends (seed 52044).
    if (this.invariants.dataLostSince(entry.since) || !listed(server)) return;
    if (this.servers.length > 1 && this.servers.filter(listed).length <= this.servers.length / 2) return;
    this.invariants.violate(
      'held-after-unlock',
      `${this.servers.length > 1 ? 'a majority of the masters' : server.name} lists ${entry.owner} as a holder of ${entry.family}:${entry.name}, whose last unlock succeeded at ${entry.at.toFixed(3)}`,
    );
    this.released.get(entry.name)?.delete(`${entry.family}:${entry.owner}`);
  }
}
