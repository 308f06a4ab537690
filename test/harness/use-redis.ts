import { LockClient, type LockClientOptions } from 'nestjs-distributed-lock';
import { RedisServer, type RedisServerOptions } from 'redis-topology';

/**
 * Starts a redis-server for the current test file (beforeAll) and stops it (afterAll). Clients made
 * with `client()` are closed after each test, so no timer or connection outlives its test.
 */
export function useRedis(options: RedisServerOptions = {}): {
  server: () => RedisServer;
  client: (overrides?: LockClientOptions) => Promise<LockClient>;
} {
  let server: RedisServer | undefined;
  const clients: LockClient[] = [];

  beforeAll(async () => {
    server = await RedisServer.start(options);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await server?.stop();
    server?.cleanup();
  });

  return {
    server: () => {
      if (!server) throw new Error('redis-server is not started yet (use it inside a test or hook)');
      return server;
    },
    client: async (overrides: LockClientOptions = {}) => {
      const client = await LockClient.connect({
        connection: { mode: 'single', host: server!.host, port: server!.port },
        ...overrides,
      });
      clients.push(client);
      return client;
    },
  };
}
