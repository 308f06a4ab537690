import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import { LockClient } from 'nestjs-distributed-lock';
import { countCalls, type ClientDriver } from '../client-drivers.js';

/** GLIDE's commands, as the suites use them. */
interface GlideData {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  rpush(key: string, elements: string[]): Promise<number>;
  llen(key: string): Promise<number>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
}

// GLIDE logs every error reply at WARN by default (NOSCRIPT before each script's first EVAL, a guarded
// script's refusal...): the suite's output keeps its errors only.
Logger.init('error');

/**
 * Valkey GLIDE: the lock client is given `{ glide: GlideClient or GlideClusterClient, configuration }`
 * and creates its own two GLIDE clients (commands, subscriptions), which it closes.
 */
export const GLIDE: ClientDriver = {
  name: 'valkey-glide',
  label: 'Valkey GLIDE',
  target: 'the valkey-glide clients made from options.client',
  async connect(topology, overrides) {
    const servers = topology.mode === 'cluster' ? topology.servers.slice(0, 3) : topology.servers.slice(0, 1);
    if (topology.mode !== 'single' && topology.mode !== 'cluster')
      throw new Error(`no GLIDE client for ${topology.mode} mode: GLIDE has standalone and cluster clients`);
    const configuration = { addresses: servers.map((server) => ({ host: server.host, port: server.port })) };
    const client = await LockClient.connect({ ...overrides, client: { glide: topology.mode === 'cluster' ? GlideClusterClient : GlideClient, configuration } });
    return { client, close: () => client.close() };
  },
  data(client) {
    const glide = client.redis as unknown as GlideData;
    return {
      get: (key) => glide.get(key),
      set: (key, value) => glide.set(key, String(value)),
      rpush: (key, value) => glide.rpush(key, [value]),
      llen: (key) => glide.llen(key),
      lrange: (key, start, stop) => glide.lrange(key, start, stop),
    };
  },
  // Every command goes through customCommand, its arguments first.
  countScriptSends: (client, sha) =>
    countCalls(client.redis, 'customCommand', (args) => {
      const command = args[0] as string[];
      return command[0] === 'EVALSHA' && command[1] === sha;
    }),
};
