import type { WorkerMessage } from '../harness/worker-process.js';
import { describeTransport, readLockError, type Handler, type Reply, type TransportClient, type TransportUnderTest } from './transport-suite.js';

/** One error of a GraphQL response, as the client gets it. */
interface GraphQLError {
  message: string;
  path?: string[];
  extensions: Record<string, unknown>;
}

/** The operation each handler of the suite is, in apps/graphql.app.ts. */
const OPERATIONS: Record<Handler | 'tokenAsInt', { field: string; query: string }> = {
  increment: { field: 'increment', query: 'mutation { increment { value token } }' },
  'increment-unlocked': { field: 'incrementUnlocked', query: 'mutation { incrementUnlocked }' },
  busy: { field: 'busy', query: 'mutation ($id: String) { busy(id: $id) }' },
  crash: { field: 'crash', query: 'mutation { crash }' },
  lost: { field: 'lost', query: 'mutation ($id: String!) { lost(id: $id) }' },
  tokenAsInt: { field: 'tokenAsInt', query: 'mutation { tokenAsInt }' },
};

interface GraphQLClient extends TransportClient {
  call(handler: Handler | 'tokenAsInt', variables?: Record<string, unknown>): Promise<Reply>;
}

async function connect(ready: WorkerMessage): Promise<GraphQLClient> {
  const url = `${String(ready.url)}/graphql`;
  return {
    async call(handler, variables) {
      const { field, query } = OPERATIONS[handler];
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
      expect(response.status).toBe(200); // field errors come in the body
      const { data, errors } = (await response.json()) as { data: Record<string, unknown> | null; errors?: GraphQLError[] };
      return errors ? { error: { error: errors[0]!, data } } : { value: data![field] };
    },
    async close() {},
  };
}

const graphql: TransportUnderTest = {
  app: 'graphql',
  connect,
  read(reply) {
    return 'value' in reply ? { outcome: 'ok' } : readLockError((reply.error as { error: GraphQLError }).error.extensions);
  },
  expectShape(outcome, reply) {
    const { error, data } = (reply as { error: { error: GraphQLError; data: unknown } }).error;
    expect(data).toBeNull(); // the field is non-null (code-first's default), so its error nulls the whole result
    switch (outcome) {
      case 'busy':
        expect(error).toMatchObject({ message: expect.stringMatching(/busy.*Retry after \d+ s/), path: ['busy'] });
        expect(error.extensions).toEqual({ code: 'LOCK_ACQUIRE_TIMEOUT', retryAfterMs: expect.any(Number) });
        break;
      case 'unavailable':
        expect(error.message).toMatch(/store is unavailable/);
        expect(error.extensions).toEqual({ code: 'LOCK_BACKEND_ERROR', retryAfterMs: 1000 });
        break;
      case 'bad-key':
        expect(error.message).toContain('graphql data.id');
        expect(error.extensions).toEqual({ code: 'LOCK_NAME_TEMPLATE' });
        break;
      case 'lost':
        expect(error.message).toMatch(/was lost/);
        expect(error.extensions).toEqual({ code: 'LOCK_LOST', retryAfterMs: 1000, reason: 'lease-expired' });
        break;
      case 'crash':
        expect(error).toMatchObject({ message: 'the handler crashed', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
        break;
    }
  },
};

describeTransport('GraphQL (Apollo, code-first): two app processes, one Redis', graphql, (run) => {
  it('a fencing token reaches the client whole as a String; the control, as an Int, is refused by GraphQL', async () => {
    const client = run().clients[0] as GraphQLClient;
    const reply = await client.call('increment');
    const { token } = (reply as { value: { token: string } }).value;
    expect(token).toMatch(/^\d+$/);
    expect(Number(token)).toBeGreaterThan(2 ** 31);
    expect(Number.isSafeInteger(Number(token))).toBe(true);
    const control = (await client.call('tokenAsInt')) as { error: { error: GraphQLError } };
    expect(control.error.error.message).toMatch(/Int cannot represent non 32-bit signed integer value/);
  });
});
