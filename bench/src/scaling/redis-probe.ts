import type { Redis } from 'ioredis';

/**
 * What the scaling curves read from Redis itself: CPU time of the server process (`INFO cpu`, user +
 * sys: CPU time, so a busy host does not inflate it the way wall-clock `commandstats` usec would),
 * commands processed (`INFO stats`; Redis 7 counts the commands a script calls too), memory
 * (`INFO memory` used_memory: what the allocator holds for data, dictionaries and client buffers) and
 * the script calls (`INFO commandstats`, EVAL + EVALSHA).
 */
export interface RedisSnapshot {
  /** Seconds of CPU the server process has used (user + sys). */
  cpuSeconds: number;
  commands: number;
  usedMemory: number;
  scriptCalls: number;
  connectedClients: number;
}

function field(text: string, name: string): number {
  const match = new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

function commandCalls(commandstats: string, command: string): number {
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(commandstats);
  return match ? Number(match[1]) : 0;
}

export async function redisSnapshot(admin: Redis): Promise<RedisSnapshot> {
  const [info, commandstats] = await Promise.all([admin.info(), admin.info('commandstats')]);
  return {
    cpuSeconds: field(info, 'used_cpu_user') + field(info, 'used_cpu_sys'),
    commands: field(info, 'total_commands_processed'),
    usedMemory: field(info, 'used_memory'),
    scriptCalls: commandCalls(commandstats, 'evalsha') + commandCalls(commandstats, 'eval'),
    connectedClients: field(info, 'connected_clients'),
  };
}

export interface RedisDelta {
  cpuMs: number;
  commands: number;
  memoryBytes: number;
  scriptCalls: number;
}

export function redisDelta(from: RedisSnapshot, to: RedisSnapshot): RedisDelta {
  return {
    cpuMs: (to.cpuSeconds - from.cpuSeconds) * 1000,
    commands: to.commands - from.commands,
    memoryBytes: to.usedMemory - from.usedMemory,
    scriptCalls: to.scriptCalls - from.scriptCalls,
  };
}

/** Client CPU (user + sys) of this process since `from`, in ms. */
export function cpuMsSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}

/**
 * Subscriptions held on the server, from `CLIENT LIST` (sub + psub + ssub of every connection), the
 * connections other than `exceptName`'s, and the channels with at least one subscriber
 * (`PUBSUB CHANNELS`, plus `PUBSUB SHARDCHANNELS` where the server has it).
 */
export async function subscriptionCounts(admin: Redis, exceptName: string): Promise<{ subscriptions: number; connections: number; channels: number }> {
  const list = (await admin.client('LIST')) as string;
  let subscriptions = 0;
  let connections = 0;
  for (const line of list.split('\n')) {
    if (!line.trim() || new RegExp(`(^| )name=${exceptName}( |$)`).test(line)) continue;
    connections += 1;
    for (const kind of ['sub', 'psub', 'ssub']) subscriptions += Number(new RegExp(`(?:^| )${kind}=(\\d+)`).exec(line)?.[1] ?? 0);
  }
  const channels = ((await admin.call('PUBSUB', 'CHANNELS')) as string[]).length;
  const shardChannels = ((await admin.call('PUBSUB', 'SHARDCHANNELS').catch(() => [])) as string[]).length;
  return { subscriptions, connections, channels: channels + shardChannels };
}

/** Heap in use after a full collection (the process must run with --expose-gc). */
export function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc: memory per lock is measured after a full collection');
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
