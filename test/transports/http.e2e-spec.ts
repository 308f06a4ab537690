import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerMessage } from '../harness/worker-process.js';
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
            retryAfterMs: expect.any(Number),
          });
          // The header is the body's estimate in whole seconds (HTTP's unit), at least 1.
          expect(Number(retryAfter)).toBe(Math.max(1, Math.ceil((body.retryAfterMs as number) / 1000)));
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
          expect(body).toEqual({ statusCode: 400, error: 'Bad Request', code: 'LOCK_NAME_TEMPLATE', message: expect.stringMatching(/request\.body\.id/) });
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

/** Preloaded into one of the Express processes: the optional transport packages cannot be resolved there. */
const HIDE_OPTIONAL_PACKAGES = `--import=${join(fileURLToPath(new URL('../../', import.meta.url)), '.cache/transport-apps/hide-optional-packages.js')}`;

describeTransport(
  'HTTP on Express: two app processes, one Redis; the second without the optional transport packages',
  { ...http('express'), env: (i) => ({ ADAPTER: 'express', ...(i === 1 ? { NODE_OPTIONS: HIDE_OPTIONAL_PACKAGES } : {}) }) },
  (run) => {
    it('the process without @nestjs/microservices, @nestjs/websockets, @nestjs/graphql and graphql locks and answers as the other does (it never asks for them)', async () => {
      expect(run().ready[1]!.microservices).toBe('missing'); // the hiding works: the control
      const holder = await run().other().lock(`${run().run}:busy:2`, '20s');
      const reply = await run().clients[1]!.call('busy', { id: '2' });
      await holder.unlock();
      expect(http('express').read(reply)).toMatchObject({ outcome: 'busy', code: 'LOCK_ACQUIRE_TIMEOUT' });
      http('express').expectShape('busy', reply);
    });
  },
);
describeTransport('HTTP on Fastify: two app processes, one Redis', http('fastify'));
