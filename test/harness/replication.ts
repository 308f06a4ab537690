import { waitUntil, withClient, type RedisServer } from 'redis-topology';

/**
 * Cuts a replica off its master so that later writes do not reach it, as a network partition or a
 * lagging link would: the replica is given a password the master does not have and its link is
 * dropped, so every reconnection fails at AUTH. It keeps its data and stays eligible for promotion
 * (sentinel and cluster only exclude replicas cut off for many times the failure timeout), which is
 * how a failover can promote a replica that lacks the last writes.
 */
export async function cutReplicationLink(replica: RedisServer): Promise<void> {
  await withClient(replica, async (client) => {
    await client.config('SET', 'masterauth', 'not-the-masters-password');
    await client.call('CLIENT', 'KILL', 'TYPE', 'master');
  });
  await waitUntil(
    () => withClient(replica, async (client) => /master_link_status:down/.test(await client.info('replication'))),
    `replica ${replica.port} to lose its master link`,
  );
}

/** The value of a string key as `server` has it (no cluster redirection: that node's own data). */
export function readOn(server: RedisServer, key: string): Promise<string | null> {
  return withClient(server, async (client) => {
    // A cluster replica answers reads of its own data only after READONLY; elsewhere it is refused, harmlessly.
    await client.call('READONLY').catch(() => undefined);
    return client.get(key);
  });
}
