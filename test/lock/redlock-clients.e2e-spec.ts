import { InvalidLockConfigError, LockClient } from 'nestjs-distributed-lock';
import { RedisServer } from 'redis-topology';
import type { Redis } from 'ioredis';

/**
 * RedLock over clients the application already has: `client: [a, b, c]`, one client per independent
 * master, as the redlock package takes them. The same lock semantics as `connection: { mode:
 * 'redlock', nodes }`: a majority grants, one master down changes nothing.
 */
describe('RedLock over an array of clients', () => {
  const servers: RedisServer[] = [];
  const connections: Redis[] = [];
  const clients: LockClient[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await RedisServer.start());
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(connections.map((connection) => connection.quit().catch(() => undefined)));
    await Promise.all(servers.map((server) => server.stop()));
  });

  async function lockClient(): Promise<LockClient> {
    const given = servers.map((server) => server.client());
    connections.push(...given);
    const client = await LockClient.connect({ client: given });
    clients.push(client);
    return client;
  }

  it('is RedLock: mode redlock, exclusion across clients, the lock written on every master', async () => {
    const a = await lockClient();
    const b = await lockClient();
    expect(a.mode).toBe('redlock');
    const held = await a.lock('rl:clients', '10s');
    expect(await b.tryLock('rl:clients')).toBe(false);
    for (const connection of connections.slice(0, 3)) expect(await connection.exists('lock:{rl:clients}')).toBe(1);
    const waiting = b.tryLock('rl:clients', { waitTime: '5s' });
    await held.unlock();
    const next = await waiting;
    expect(next && next.token).toBeGreaterThan(held.token);
    if (next) await next.unlock();
  });

  it('fewer than 3 clients is a configuration error, before any connection', () => {
    const two = [servers[0]!.client(), servers[1]!.client()];
    connections.push(...two);
    expect(() => new LockClient({ client: two })).toThrow(InvalidLockConfigError);
  });
});
