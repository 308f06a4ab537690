import type { EventEmitter } from 'node:events';
import { createConnection } from 'node:net';
import { Redis, type RedisOptions } from 'ioredis';
import { FaultProxy, stopAllFaultProxies } from './fault-proxy.js';
import { freePort } from './free-port.js';
import { RedisServer } from './redis-server.js';
import { waitUntil } from './topologies.js';

/** The next `event` of `emitter` (events.once would reject on an 'error' that a test expects). */
function next(emitter: EventEmitter, event: string): Promise<unknown[]> {
  return new Promise((resolve) => emitter.once(event, (...args: unknown[]) => resolve(args)));
}

/** Connects a plain socket; resolves once connected, rejects with the connect error. */
function connectRaw(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

describe('FaultProxy', () => {
  let server: RedisServer;
  /** A healthy link to the same server, to see what did (not) reach Redis. */
  let direct: Redis;
  let proxy: FaultProxy;
  const clients: Redis[] = [];

  const through = (options: RedisOptions = {}): Redis => {
    const client = new Redis({ host: proxy.host, port: proxy.port, ...options });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await RedisServer.start();
    direct = server.client();
  });
  beforeEach(async () => {
    await direct.flushall();
    proxy = await FaultProxy.start({ targetPort: server.port });
  });
  afterEach(async () => {
    // Clients first, so none of them is left reconnecting to a proxy that is gone.
    // (An ended client is left alone: its disconnect() would arm a timer for a socket already closed.)
    for (const client of clients.splice(0)) if (client.status !== 'end') client.disconnect();
    await stopAllFaultProxies();
  });
  afterAll(async () => {
    await server.stop();
    server.cleanup();
  });

  it('passes commands and replies through and counts the bytes', async () => {
    const client = through();
    expect(await client.set('greeting', 'hello')).toBe('OK');
    expect(await client.get('greeting')).toBe('hello');
    expect(await direct.get('greeting')).toBe('hello');
    const stats = proxy.stats();
    expect(stats).toMatchObject({ connections: 1, accepted: 1, bytesQueued: 0, bytesDropped: 0 });
    expect(stats.bytesToServer).toBeGreaterThan(0);
    expect(stats.bytesToClient).toBeGreaterThan(0);
  });

  it('adds the latency in each direction, and heal() removes it', async () => {
    const client = through();
    await client.ping();
    proxy.setLatency(100);
    const started = performance.now();
    expect(await client.ping()).toBe('PONG');
    // Only the lower bound: it is what the proxy guarantees; an upper bound would measure the machine.
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);

    proxy.heal();
    expect(await client.ping()).toBe('PONG');
    expect(proxy.stats().bytesQueued).toBe(0);
  });

  it('keeps the byte order when the latency drops while data is in flight', async () => {
    const client = through();
    await client.ping();
    proxy.setLatency(500);
    const early = Array.from({ length: 50 }, (_, i) => client.echo(`early-${i}`));
    await waitUntil(async () => proxy.stats().bytesQueued > 0, 'the early commands to be delayed');
    proxy.setLatency(0);
    // These are due at once, yet must wait behind the early ones: a reordered stream would pair
    // replies with the wrong commands.
    const late = Array.from({ length: 50 }, (_, i) => client.echo(`late-${i}`));
    expect(await Promise.all([...early, ...late])).toEqual([...early.map((_, i) => `early-${i}`), ...late.map((_, i) => `late-${i}`)]);
  });

  it('black-hole holds what is sent, and heal() delivers it in order', async () => {
    const patient = through();
    const impatient = through({ commandTimeout: 300 });
    await Promise.all([patient.ping(), impatient.ping()]);

    proxy.blackhole();
    let settled = false;
    const held = patient.incr('held').finally(() => (settled = true));
    // The link is dead although the sockets are open: no reply comes back...
    await expect(impatient.ping()).rejects.toThrow(/timed out/);
    expect(settled).toBe(false);
    // ...and the held command has not reached Redis.
    expect(await direct.get('held')).toBeNull();
    expect(proxy.stats().bytesQueued).toBeGreaterThan(0);

    proxy.heal();
    expect(await held).toBe(1);
    // The timed-out PING was held, not lost: its reply comes first, so the stream stays in step.
    expect(await impatient.echo('after heal')).toBe('after heal');
    expect(proxy.stats()).toMatchObject({ bytesQueued: 0, bytesDropped: 0 });
  });

  it('black-hole accepts new connections but holds their bytes until heal()', async () => {
    proxy.blackhole();
    const late = through();
    await next(late, 'connect');
    expect(proxy.stats().connections).toBe(1);
    expect(late.status).toBe('connect'); // connected, but its ready check gets no answer
    proxy.heal();
    await next(late, 'ready');
    expect(await late.ping()).toBe('PONG');
  });

  it('black-hole with drop discards what is sent: it never arrives', async () => {
    const client = through({ commandTimeout: 300 });
    await client.ping();

    proxy.blackhole({ drop: true });
    await expect(client.incr('dropped')).rejects.toThrow(/timed out/);
    expect(proxy.stats().bytesDropped).toBeGreaterThan(0);
    proxy.heal();

    // Redis runs one connection's commands in order, so once a later SET on the same connection is
    // visible, the INCR would be too had it been delivered. (The SET's own reply is taken by the
    // client as the INCR's: a dropped stream is out of step, which is why TCP never drops.)
    const barrier = client.set('barrier', '1').catch(() => undefined);
    await waitUntil(async () => (await direct.get('barrier')) === '1', 'the barrier to reach Redis');
    expect(await direct.get('dropped')).toBeNull();
    await barrier;
  });

  it('reset() aborts the connection with an RST; the client reconnects by itself', async () => {
    const client = through();
    await client.ping();
    const errors: NodeJS.ErrnoException[] = [];
    client.on('error', (error: NodeJS.ErrnoException) => errors.push(error));
    const closed = next(client, 'close');
    const readyAgain = next(client, 'ready');

    proxy.reset();
    expect(proxy.stats().connections).toBe(0);
    await closed;
    await readyAgain;
    expect(errors.map((error) => error.code)).toContain('ECONNRESET');
    expect(await client.ping()).toBe('PONG');
    expect(proxy.stats()).toMatchObject({ connections: 1, accepted: 2 });
  });

  it('refuse() refuses new connections, keeps current ones; accept() listens again on the same port', async () => {
    const client = through();
    await client.ping();
    const port = proxy.port;

    proxy.refuse();
    await expect(connectRaw(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await client.ping()).toBe('PONG');

    await proxy.accept();
    expect(proxy.port).toBe(port);
    expect(await through().ping()).toBe('PONG');
  });

  it('resets the client when the target cannot be reached', async () => {
    const nowhere = await FaultProxy.start({ targetPort: await freePort() });
    const socket = createConnection(nowhere.port, '127.0.0.1');
    const errors: NodeJS.ErrnoException[] = [];
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error));
    await next(socket, 'close');
    expect(errors.map((error) => error.code)).toEqual(['ECONNRESET']);
    await nowhere.stop();
  });

  it('stop() closes the listener and every connection, delayed or held data included', async () => {
    const client = through({ retryStrategy: () => null });
    await client.ping();
    proxy.setLatency(10_000);
    const pending = client.ping().catch((error: Error) => error);
    await waitUntil(async () => proxy.stats().bytesQueued > 0, 'the PING to be delayed');

    const ended = next(client, 'end');
    await proxy.stop();
    await ended;
    expect(await pending).toBeInstanceOf(Error);
    expect(proxy.stats()).toMatchObject({ connections: 0, bytesQueued: 0 });
    await expect(connectRaw(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('rejects a target that is not a port', async () => {
    await expect(FaultProxy.start({ targetPort: 0 })).rejects.toThrow(RangeError);
    expect(() => proxy.setLatency(-1)).toThrow(RangeError);
  });
});
