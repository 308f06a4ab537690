import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { freePort } from 'redis-topology';
import { until } from '../harness/wait.js';
import type { WorkerMessage, WorkerProcess } from '../harness/worker-process.js';
import { logged } from './transport-apps.js';
import { describeTransport, lockErrorBody, readLockError, type Reply, type TransportClient, type TransportUnderTest } from './transport-suite.js';
import type { Redis } from 'ioredis';

/** A ClientProxy of one app process: request/response (`send`) and fire-and-forget (`emit`). */
interface TcpClient extends TransportClient {
  emit(pattern: string, data?: Record<string, unknown>): Promise<void>;
}

const tcp: TransportUnderTest = {
  app: 'microservice',
  // A TCP microservice listens where it is told: the test picks a free port for each process.
  env: async () => ({ PORT: String(await freePort()) }),
  async connect(ready: WorkerMessage): Promise<TcpClient> {
    const proxy = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port: Number(ready.port) } });
    await proxy.connect();
    return {
      async call(handler, data): Promise<Reply> {
        try {
          return { value: await firstValueFrom(proxy.send(handler, data ?? {})) };
        } catch (error) {
          return { error };
        }
      },
      async emit(pattern, data = {}) {
        await lastValueFrom(proxy.emit(pattern, data), { defaultValue: undefined });
      },
      async close() {
        await proxy.close();
      },
    };
  },
  read(reply) {
    return 'value' in reply ? { outcome: 'ok' } : readLockError(reply.error as Record<string, unknown>);
  },
  expectShape(outcome, reply) {
    expect((reply as { error: unknown }).error).toEqual(lockErrorBody(outcome, 'rpc data'));
  },
};

const handled = (apps: WorkerProcess[], pattern: string): number =>
  apps.reduce((sum, app) => sum + app.messages.filter((m) => m.type === 'handled' && m.pattern === pattern).length, 0);

describeTransport('a TCP microservice (@MessagePattern, @EventPattern): two app processes, one Redis', tcp, (run) => {
  const emit = (i: number, pattern: string, data?: Record<string, unknown>): Promise<void> => (run().clients[i % 2] as TcpClient).emit(pattern, data);

  it('@EventPattern: no lost update across two processes; the unlocked control loses updates', async () => {
    const { apps, other } = run();
    const N = 20;
    await Promise.all(Array.from({ length: N }, (_, i) => emit(i, 'increment-event-unlocked')));
    await Promise.all(Array.from({ length: N }, (_, i) => emit(i, 'increment-event')));
    await until(() => handled(apps, 'increment-event-unlocked') === N && handled(apps, 'increment-event') === N, 'every event to be handled');
    expect(Number(await (other().redis as Redis).get(`${run().run}:counter:event-locked`))).toBe(N);
    expect(Number(await (other().redis as Redis).get(`${run().run}:counter:event-unlocked`))).toBeLessThan(N);
  });

  it('@EventPattern, busy: the handler does not run, and the service says so at log level (no client hears of it), not as a warning or an error', async () => {
    const { apps, other } = run();
    const holder = await other().lock(`${run().run}:busy-event:1`, '20s');
    await emit(0, 'busy-event', { id: '1' });
    await apps[0]!.waitFor(
      (m) => m.type === 'log' && m.level === 'log' && /busy-event:1" stayed busy .*the event was not handled/.test(String(m.message)),
      'the busy event to be logged',
    );
    await holder.unlock();
    expect(handled(apps, 'busy-event')).toBe(0);
    expect([...logged(apps[0]!, 'warn', /busy-event/), ...logged(apps[0]!, 'error', /busy-event|stayed busy/)]).toEqual([]);
  });
});
