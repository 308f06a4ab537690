import { hostname } from 'node:os';
import type { RedisCommands } from '../redis/redis-port.js';
import { defineLockScript } from '../scripts/lock-script.js';
import { every, type CancelTimer, type Clock } from '../util/clock.js';
import type { LockInstanceInfo } from './lock-inspection.js';

/** How long a process's registration lives without a refresh (a process that died leaves it this long). */
export const INSTANCE_REGISTRATION_TTL_MS = 60_000;
/** How often a registered process refreshes it. */
const REFRESH_MS = INSTANCE_REGISTRATION_TTL_MS / 3;

/**
 * Writes a process's registration and its lifetime in one step: written as two commands, a process
 * that died between them left a registration that never expired (found by the simulator).
 */
export const registerInstance = defineLockScript<{ key: string; ttlMs: number; fields: readonly string[] }, number>({
  name: 'dlockRegisterInstance',
  keys: (a) => [a.key],
  argv: (a) => [a.ttlMs, ...a.fields],
  lua: `
local key, ttl_ms = KEYS[1], ARGV[1]
redis.call('hset', key, unpack(ARGV, 2))
redis.call('pexpire', key, ttl_ms)
return 1
`,
});

/** The key that describes one lock client: `<prefix>clients:<client id>` (outside any lock's `{name}`). */
export function instanceKey(prefix: string, clientId: string): string {
  return `${prefix}clients:${clientId}`;
}

/**
 * Makes a process readable in lock inspection: owner ids, waiting marks and fair-queue entries carry
 * only a random client id, so each client that takes part in locking writes one small hash
 * `<prefix>clients:<client id>` = {host, pid, name} with a one-minute TTL, refreshed every 20 s
 * (unref'd timer) and deleted on close.
 *
 * Why a registration and not a field written with each acquisition: it costs the lock path nothing
 * (the first acquisition of the process starts it: one boolean check per acquisition after that),
 * it covers waiters as well as holders, and one write per process per 20 s is nothing for Redis. What
 * it costs: a label can be missing for up to 20 s after Redis lost its data, and a process that died
 * keeps its label for up to a minute (its locks expire on their own leases). A process that never
 * locks (the command-line inspector, a health check) never registers.
 */
export class InstanceRegistration {
  readonly key: string;
  private readonly fields: string[];
  private started = false;
  private timer: CancelTimer | undefined;

  constructor(
    private readonly redis: RedisCommands,
    prefix: string,
    clientId: string,
    instanceName: string | undefined,
    private readonly clock: Clock,
    private readonly failed: (error: unknown) => void,
  ) {
    this.key = instanceKey(prefix, clientId);
    this.fields = ['host', hostname(), 'pid', String(process.pid), ...(instanceName === undefined ? [] : ['name', instanceName])];
  }

  /** Called by every acquisition: registers the process the first time, then does nothing. */
  announce(): void {
    if (this.started) return;
    this.started = true;
    this.refresh();
    this.timer = every(this.clock, REFRESH_MS, () => this.refresh());
  }

  /** Writes the registration again (on the timer, and when the connection is back after a drop). */
  refresh(): void {
    if (!this.started) return;
    const args = { key: this.key, ttlMs: INSTANCE_REGISTRATION_TTL_MS, fields: this.fields };
    this.redis.runScript(registerInstance, registerInstance.keys(args), registerInstance.argv(args)).catch(this.failed);
  }

  /** Stops refreshing and deletes the registration (best effort; it expires anyway). */
  async stop(): Promise<void> {
    this.timer?.();
    this.timer = undefined;
    if (!this.started) return;
    this.started = false;
    await this.redis.del(this.key).catch(this.failed);
  }
}

/** Readable descriptions of the clients `clientIds` (registrations under `prefix`), by client id. */
export async function readInstances(redis: RedisCommands, prefix: string, clientIds: Iterable<string>, self: string): Promise<Map<string, LockInstanceInfo>> {
  const ids = [...new Set(clientIds)];
  // One HGETALL per client: in a cluster their keys live in different slots.
  const registrations = await Promise.all(ids.map((id) => redis.hgetall(instanceKey(prefix, id))));
  return new Map(ids.map((id, i) => [id, describeInstance(id, registrations[i]!, id === self)]));
}

function describeInstance(clientId: string, registration: Record<string, string>, self: boolean): LockInstanceInfo {
  const host = registration.host;
  const pid = registration.pid === undefined ? undefined : Number(registration.pid);
  const instanceName = registration.name;
  const where = host === undefined ? undefined : `${host}:${registration.pid}`;
  const label = where === undefined ? `client ${clientId.slice(0, 8)}` : instanceName === undefined ? where : `${instanceName}@${where}`;
  return { clientId, host, pid, instanceName, label, self };
}
