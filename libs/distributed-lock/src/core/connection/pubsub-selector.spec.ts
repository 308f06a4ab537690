import type { PubSubPort, RedisCommands } from '../redis/redis-port.js';
import { describePubSubChoice, type PubSubChoice } from '../events/pubsub-choice.js';
import { PubSubSelector } from './pubsub-selector.js';

/** A server that answers COMMAND INFO and INFO as told (real servers: test/compat/pubsub-selection.e2e-spec.ts). */
function server(answers: { command?: unknown; info?: unknown }): { client: RedisCommands; asked: string[] } {
  const asked: string[] = [];
  const answer = (value: unknown): Promise<unknown> => (value instanceof Error ? Promise.reject(value) : Promise.resolve(value));
  const client = {
    isCluster: true,
    serverCommand: ([command]: readonly string[]) => {
      asked.push(command!);
      return answer(command === 'COMMAND' ? answers.command : answers.info);
    },
    isReplyError: (error: unknown) => error instanceof Error && error.name === 'ReplyError',
  };
  return { client: client as unknown as RedisCommands, asked };
}

function replyError(message: string): Error {
  const error = new Error(message);
  error.name = 'ReplyError';
  return error;
}

async function choose(
  answers: { command?: unknown; info?: unknown },
  mayShard = true,
): Promise<{ choice: PubSubChoice; asked: string[]; heard: PubSubChoice[] }> {
  const { client, asked } = server(answers);
  const heard: PubSubChoice[] = [];
  const selector = new PubSubSelector(client, SHARDED_SUBSCRIBER, mayShard, (choice) => heard.push(choice));
  const choice = await selector.select();
  expect(await selector.select()).toBe(choice); // asked once
  expect(selector.sharded).toBe(choice.flavour === 'sharded');
  return { choice, asked, heard };
}

/** What matters of a subscriber with a connection per shard (ioredis' Cluster made with `shardedSubscribers: true`, node-redis' cluster). */
const SHARDED_SUBSCRIBER = { shardedEverywhere: true } as unknown as PubSubPort;
const SPUBLISH_INFO = [['spublish', -3, ['pubsub', 'loading', 'stale', 'fast'], 1, 1, 1]];

describe('PubSubSelector', () => {
  it('a Redis 7+ cluster: sharded, from COMMAND INFO alone', async () => {
    const { choice, asked, heard } = await choose({ command: SPUBLISH_INFO });
    expect(describePubSubChoice(choice)).toBe('sharded pub/sub (SSUBSCRIBE)');
    expect(asked).toEqual(['COMMAND']);
    expect(heard).toEqual([choice]);
  });

  it('a cluster without SPUBLISH (Redis 6, KeyDB): plain, naming the version', async () => {
    const { choice } = await choose({ command: [null], info: '# Server\r\nredis_version:6.0.16\r\n' });
    expect(describePubSubChoice(choice)).toBe('plain pub/sub (Redis 6.0.16 cluster has no sharded pub/sub)');
  });

  it('COMMAND refused (renamed, ACL): the version decides', async () => {
    expect((await choose({ command: replyError("ERR unknown command 'COMMAND'"), info: 'redis_version:7.2.4\r\n' })).choice.flavour).toBe('sharded');
    expect((await choose({ command: replyError('NOPERM'), info: 'redis_version:6.2.14\r\n' })).choice).toEqual({
      flavour: 'plain',
      reason: 'Redis 6.2.14 cluster has no sharded pub/sub',
    });
  });

  it('nothing answered but refusals: plain pub/sub, which every Redis has, saying why', async () => {
    const { choice } = await choose({ command: replyError('NOPERM this user has no permissions to run the command'), info: replyError('NOPERM info') });
    expect(choice.flavour).toBe('plain');
    expect(choice.reason).toMatch(/did not say .*NOPERM this user/);
  });

  it('a cluster client that subscribes through one node (iovalkey, older ioredis): plain, without asking', async () => {
    const { client, asked } = server({ command: SPUBLISH_INFO });
    const selector = new PubSubSelector(client, { shardedEverywhere: false } as unknown as PubSubPort, true, () => undefined);
    expect(await selector.select()).toMatchObject({ flavour: 'plain', reason: expect.stringMatching(/through one node/) });
    expect(asked).toEqual([]);
  });

  it('not a cluster: plain, without asking', async () => {
    const { choice, asked } = await choose({}, false);
    expect(describePubSubChoice(choice)).toBe('plain pub/sub (SUBSCRIBE)');
    expect(asked).toEqual([]);
  });

  it('a network failure is not a choice: it fails the caller and the next caller asks again', async () => {
    const answers: { command?: unknown; info?: unknown } = { command: new Error('Connection is closed.') };
    const { client } = server(answers);
    const selector = new PubSubSelector(client, SHARDED_SUBSCRIBER, true, () => undefined);
    await expect(selector.select()).rejects.toThrow('Connection is closed.');
    expect(selector.current).toBeUndefined();
    await expect(selector.pending()).rejects.toThrow('Connection is closed.');
    answers.command = SPUBLISH_INFO;
    await expect(selector.select()).resolves.toMatchObject({ flavour: 'sharded' });
    expect(selector.pending()).toBeUndefined();
  });
});
