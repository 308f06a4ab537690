import { io, type Socket } from 'socket.io-client';
import type { WorkerMessage } from '../harness/worker-process.js';
import { describeTransport, lockErrorBody, readLockError, type Reply, type TransportClient, type TransportUnderTest } from './transport-suite.js';

/** What a socket.io client got for a failed message: the ack's reply (lock failures only) and the `exception` event. */
interface WsError {
  ack?: Record<string, unknown>;
  exception: Record<string, unknown>;
}

/**
 * A socket.io client as transports.md describes it: it sends each message with an acknowledgement,
 * reads a reply `{ status: 'error', code, ... }` as a lock failure, and listens to `exception` (which
 * also carries a lock failure, right after its ack, and is all a crash gives: Nest never acks an error).
 */
async function connect(ready: WorkerMessage): Promise<TransportClient> {
  const socket: Socket = io(String(ready.url), { transports: ['websocket'], reconnection: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
  /** Calls waiting for the `exception` event that follows their error ack, then calls that got no ack yet (a crash's only answer). */
  const afterAck: ((exception: Record<string, unknown>) => void)[] = [];
  const noAck: ((exception: Record<string, unknown>) => void)[] = [];
  socket.on('exception', (exception: Record<string, unknown>) => (afterAck.shift() ?? noAck.shift())?.(exception));
  return {
    call(handler, data): Promise<Reply> {
      return new Promise((resolve) => {
        const crashed = (exception: Record<string, unknown>): void => resolve({ error: { exception } satisfies WsError });
        noAck.push(crashed);
        socket.emit(handler, data ?? {}, (ack: unknown) => {
          noAck.splice(noAck.indexOf(crashed), 1);
          const reply = ack as Record<string, unknown> | undefined;
          if (reply?.status === 'error') afterAck.push((exception) => resolve({ error: { ack: reply, exception } satisfies WsError }));
          else resolve({ value: ack });
        });
      });
    },
    async close() {
      socket.disconnect();
    },
  };
}

const socketIo: TransportUnderTest = {
  app: 'socket-io',
  connect,
  read(reply) {
    if ('value' in reply) return { outcome: 'ok' };
    const { ack, exception } = reply.error as WsError;
    return readLockError(ack ?? exception);
  },
  expectShape(outcome, reply) {
    const { ack, exception } = (reply as { error: WsError }).error;
    if (outcome === 'crash') {
      expect(ack).toBeUndefined();
      expect(exception).toEqual({ status: 'error', message: 'Internal server error', cause: { pattern: 'crash', data: {} } });
      return;
    }
    expect(ack).toEqual(lockErrorBody(outcome, 'ws data'));
    expect(exception).toEqual(ack);
  },
};

describeTransport('socket.io (@SubscribeMessage): two app processes, one Redis', socketIo);
