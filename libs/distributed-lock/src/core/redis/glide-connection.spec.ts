import { ClosingError, RequestError, TimeoutError } from '@valkey/valkey-glide';
import { CommandNotSentError } from './glide-errors.js';
import { GlideClientHolder } from './glide-connection.js';
import type { GlideClientLike } from './glide.types.js';

/** A GLIDE client whose next replies the test decides. */
function fakeClient(): GlideClientLike & { replies: (unknown | Error)[]; closed: boolean } {
  const client = {
    replies: [] as (unknown | Error)[],
    closed: false,
    customCommand: () => {
      const reply = client.replies.shift();
      return reply instanceof Error ? Promise.reject(reply) : Promise.resolve(reply);
    },
    close: () => {
      client.closed = true;
    },
  };
  return client as unknown as GlideClientLike & { replies: (unknown | Error)[]; closed: boolean };
}

function holderOf(clients: ReturnType<typeof fakeClient>[]): { holder: GlideClientHolder; events: string[]; created: () => number } {
  let created = 0;
  const holder = new GlideClientHolder('Valkey GLIDE client', async () => clients[created++]!);
  const events: string[] = [];
  for (const event of ['ready', 'error', 'end'] as const) holder.on(event, () => events.push(event));
  return { holder, events, created: () => created };
}

const send = (holder: GlideClientHolder): Promise<unknown> => holder.run((client) => client.customCommand(['PING']));

describe('a GLIDE client the library made: its connection told from its replies (GLIDE has no connection events)', () => {
  it('is created on first use, once', async () => {
    const client = fakeClient();
    client.replies.push('PONG', 'PONG');
    const { holder, created } = holderOf([client]);
    expect(holder.status).toBe('wait');
    await Promise.all([send(holder), send(holder)]);
    expect(created()).toBe(1);
    expect(holder.status).toBe('ready');
  });

  it("says 'error' once when replies stop coming, and 'ready' when one comes again (waiters then look again)", async () => {
    const client = fakeClient();
    const { holder, events } = holderOf([client]);
    client.replies.push('PONG', new TimeoutError('timed out'), new TimeoutError('timed out'), new RequestError('ERR refused'), 'PONG', 'PONG');
    await send(holder);
    await expect(send(holder)).rejects.toBeInstanceOf(TimeoutError);
    await expect(send(holder)).rejects.toBeInstanceOf(TimeoutError);
    expect(events).toEqual(['error']);
    // A refusal is an answer, but not a success: still failing.
    await expect(send(holder)).rejects.toBeInstanceOf(RequestError);
    await send(holder);
    await send(holder);
    expect(events).toEqual(['error', 'ready']);
    expect(holder.status).toBe('ready');
  });

  it("says 'end' when GLIDE closed the client by itself, and connects a new one when asked (ConnectionRevival)", async () => {
    const [first, second] = [fakeClient(), fakeClient()];
    const { holder, events, created } = holderOf([first, second]);
    first.replies.push('PONG', new ClosingError('Received a closing error from the core'));
    await send(holder);
    await expect(send(holder)).rejects.toBeInstanceOf(ClosingError);
    expect(events).toEqual(['error', 'end']);
    expect(holder.status).toBe('end');
    await holder.connect();
    expect(created()).toBe(2);
    second.replies.push('PONG');
    await expect(send(holder)).resolves.toBe('PONG');
  });

  it('once closed by the library: the client is closed, later commands fail with a typed error, nothing is created again', async () => {
    const client = fakeClient();
    client.replies.push('PONG');
    const { holder, events, created } = holderOf([client, fakeClient()]);
    await send(holder);
    holder.close();
    expect(client.closed).toBe(true);
    expect(holder.status).toBe('end');
    await expect(send(holder)).rejects.toThrow(/closed/);
    await expect(holder.connect()).rejects.toThrow(/closed/);
    expect(created()).toBe(1);
    expect(events).toEqual([]);
  });

  it('an open circuit breaker fails the command as not sent', async () => {
    const { CircuitBreakerError } = await import('@valkey/valkey-glide');
    const client = fakeClient();
    client.replies.push(new CircuitBreakerError('open'));
    const { holder } = holderOf([client]);
    await expect(send(holder)).rejects.toBeInstanceOf(CommandNotSentError);
  });
});
