import { Logger } from '@nestjs/common';
import { LockClient, LockService, type LockClientOptions, type PubSubChoice } from 'nestjs-distributed-lock';
import { startCluster, startSingle, withClient, type ServerSettings, type Topology } from 'redis-topology';
import { nextEvent } from '../harness/wait.js';
import { withServer } from '../harness/servers.js';

/**
 * Unlock notifications use sharded pub/sub on a cluster that has it (Redis 7+) and plain pub/sub on
 * one that does not (Redis 6, KeyDB...), decided from what the server answers at connect time (with
 * lazyConnect: before the first lock call goes out), and said in one log line.
 */
function pubsubSelection(label: string, server: ServerSettings, expected: { cluster: RegExp }): void {
  describe(`unlock notifications on ${label}`, () => {
    let cluster: Topology;
    let single: Topology;
    const clients: LockClient[] = [];

    beforeAll(async () => {
      [cluster, single] = await Promise.all([startCluster({ ...server, masters: 3, replicasPerMaster: 0 }), startSingle(server)]);
    }, 60_000);
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((client) => client.close()));
    });
    afterAll(async () => {
      await Promise.all([cluster?.stop(), single?.stop()]);
    });

    function client(topology: Topology, options: Omit<LockClientOptions, 'env'> = {}, Kind: typeof LockClient = LockClient): LockClient {
      const created = new Kind({ ...options, env: topology.env });
      clients.push(created);
      return created;
    }

    /** Subscribers of `channel` on the cluster's nodes, per kind. */
    async function subscriptions(channel: string): Promise<{ plain: number; sharded: number }> {
      const counts = await Promise.all(
        cluster.servers.map((server) =>
          withClient(server, async (node) => ({
            plain: Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]),
            sharded: Number(((await node.call('PUBSUB', 'SHARDNUMSUB', channel).catch(() => [channel, 0])) as [string, number])[1]),
          })),
        ),
      );
      return counts.reduce((sum, count) => ({ plain: sum.plain + count.plain, sharded: sum.sharded + count.sharded }));
    }

    it('a cluster: the kind its server has, chosen at connect(), told once through the event and the Nest log', async () => {
      const logged: string[] = [];
      const original = Logger.prototype.log;
      Logger.prototype.log = function (message: unknown): void {
        logged.push(String(message));
      };
      const service = client(cluster, {}, LockService as unknown as typeof LockClient);
      const heard: PubSubChoice[] = [];
      service.events.on('pubsub', (choice) => heard.push(choice));
      try {
        await service.connect();
      } finally {
        Logger.prototype.log = original;
      }
      expect(heard).toHaveLength(1);
      expect(service.unlockNotifications).toBe(heard[0]);
      const line = `Unlock notifications: ${heard[0]!.flavour} pub/sub (${heard[0]!.reason})`;
      expect(line).toMatch(expected.cluster);
      expect(logged.filter((message) => message.startsWith('Unlock notifications'))).toEqual([line]);

      // And the waiters subscribe that way.
      const holder = await service.lock('sel:a', '30s');
      const waiting = service.lock('sel:a');
      await nextEvent(service.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      expect(await subscriptions('lock:{sel:a}:released')).toEqual(heard[0]!.flavour === 'sharded' ? { plain: 0, sharded: 1 } : { plain: 1, sharded: 0 });
      await holder.unlock();
      await (await waiting).unlock();
    });

    it('a single server: plain pub/sub, nothing to ask', async () => {
      const locks = client(single);
      await locks.connect();
      expect(locks.unlockNotifications).toEqual({ flavour: 'plain', reason: 'SUBSCRIBE' });
    });

    it('lazyConnect: chosen before the first lock call goes out, so its release reaches a waiter elsewhere at once', async () => {
      const lazy = client(cluster, { lazyConnect: true });
      const other = client(cluster);
      await Promise.all([lazy.connect(), other.connect()]);
      expect(lazy.unlockNotifications).toBeUndefined();
      const held = await lazy.lock('sel:lazy', '30s'); // the first call of `lazy`
      expect(lazy.unlockNotifications).toEqual(other.unlockNotifications);
      const waiting = other.lock('sel:lazy');
      await nextEvent(other.events, 'subscription', (e: { subscribed: boolean }) => e.subscribed);
      const releasedAt = performance.now();
      await held.unlock();
      await (await waiting).unlock();
      // Woken by the notification, not by the 30 s lease nor the 2 s safety re-check.
      expect(performance.now() - releasedAt).toBeLessThan(1000);
    });
  });
}

pubsubSelection('Redis 7 (the system redis-server)', {}, { cluster: /^Unlock notifications: sharded pub\/sub \(SSUBSCRIBE\)$/ });
withServer('redis-6.0', 'unlock notifications on Redis 6.0', ({ bin, version }) =>
  pubsubSelection(`Redis ${version}`, { bin }, { cluster: /^Unlock notifications: plain pub\/sub \(Redis 6\.\d+\.\d+ cluster has no sharded pub\/sub\)$/ }),
);
