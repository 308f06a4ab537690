import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useRedis } from '../harness/use-redis.js';
import { stopAllWorkers, type WorkerMessage } from '../harness/worker-process.js';
import { closeApp, logged, startApp } from './transport-apps.js';
import { describeTransport, type Reading, type Reply, type TransportUnderTest } from './transport-suite.js';

/** What an HTTP client sees: the status, Retry-After, and the JSON body. */
interface HttpError {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

const CODES: Record<number, Reading['outcome']> = { 423: 'busy', 400: 'bad-key', 500: 'crash' };

function http(adapter: 'express' | 'fastify'): TransportUnderTest {
  return {
    app: 'http',
    env: () => ({ ADAPTER: adapter }),
    async connect(ready: WorkerMessage) {
      const url = String(ready.url);
      return {
        async call(handler, data) {
          const response = await fetch(`${url}/${handler}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(data ?? {}),
          });
          const text = await response.text();
          if (response.ok) return { value: text };
          return { error: { status: response.status, retryAfter: response.headers.get('retry-after'), body: JSON.parse(text) as Record<string, unknown> } };
        },
        async close() {},
      };
    },
    read(reply: Reply): Reading {
      if ('value' in reply) return { outcome: 'ok' };
      const { status, retryAfter, body } = reply.error as HttpError;
      const retryAfterMs = retryAfter === null ? undefined : Number(retryAfter) * 1000;
      const outcome = status === 503 ? (body.code === 'LOCK_LOST' ? 'lost' : 'unavailable') : (CODES[status] ?? 'crash');
      return { outcome, code: body.code as string | undefined, retryAfterMs, reason: body.reason as string | undefined };
    },
    expectShape(outcome, reply) {
      const { status, retryAfter, body } = (reply as { error: HttpError }).error;
      switch (outcome) {
        case 'busy':
          expect(status).toBe(423);
          expect(body).toEqual({
            statusCode: 423,
            error: 'Locked',
            code: 'LOCK_ACQUIRE_TIMEOUT',
            message: expect.stringMatching(/busy.*Retry after \d+ s/),
            retryAfter: Number(retryAfter),
          });
          break;
        case 'unavailable':
          expect({ status, retryAfter }).toEqual({ status: 503, retryAfter: '1' });
          expect(body).toEqual({
            statusCode: 503,
            error: 'Service Unavailable',
            code: 'LOCK_BACKEND_ERROR',
            message: expect.stringMatching(/store is unavailable/),
          });
          break;
        case 'bad-key':
          expect(status).toBe(400);
          expect(body).toEqual({ statusCode: 400, error: 'Bad Request', code: 'LOCK_KEY_TEMPLATE', message: expect.stringMatching(/request\.body\.id/) });
          break;
        case 'lost':
          expect({ status, retryAfter }).toEqual({ status: 503, retryAfter: '1' });
          expect(body).toMatchObject({ statusCode: 503, code: 'LOCK_LOST', reason: 'lease-expired' });
          break;
        case 'crash':
          expect({ status, retryAfter, body }).toEqual({ status: 500, retryAfter: null, body: { statusCode: 500, message: 'Internal server error' } });
          break;
      }
    },
  };
}

describeTransport('HTTP on Express: two app processes, one Redis', http('express'));
describeTransport('HTTP on Fastify: two app processes, one Redis', http('fastify'));

describe('without the optional transport packages (@nestjs/microservices, @nestjs/websockets, @nestjs/graphql, graphql)', () => {
  const redis = useRedis();
  afterAll(stopAllWorkers);

  it('the library runs an HTTP app, answers busy and crash as usual, and never asks for them', async () => {
    const preload = join(fileURLToPath(new URL('../../', import.meta.url)), '.cache/transport-apps/hide-optional-packages.js');
    const { process: app, ready } = await startApp('http', {
      ADAPTER: 'express',
      REDIS_PORT: redis.server().port,
      RUN_ID: 'hidden',
      NODE_OPTIONS: `--import=${preload}`,
    });
    expect(ready.microservices).toBe('missing'); // the hiding works: the control
    const client = await http('express').connect(ready);
    const holder = await (await redis.client()).lock('hidden:busy:1', '20s');
    expect(http('express').read(await client.call('busy', { id: '1' }))).toMatchObject({ outcome: 'busy', code: 'LOCK_ACQUIRE_TIMEOUT' });
    await holder.unlock();
    expect(http('express').read(await client.call('crash'))).toMatchObject({ outcome: 'crash' });
    expect((await closeApp(app)).code).toBe(0);
    expect(logged(app, 'error', /./).filter((line) => !/the handler crashed/.test(line))).toEqual([]);
  });
});
