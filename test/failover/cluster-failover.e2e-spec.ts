import { clusterMasterOf, startCluster, waitUntil, withClient, type Topology } from 'redis-topology';
import { stopAllWorkers } from '../harness/worker-process.js';
import { analyse, LockLoad, now, record } from './load.js';

describe('cluster: CLUSTER FAILOVER of the slot that holds a busy lock', () => {
  let topology: Topology;
  beforeAll(async () => {
    topology = await startCluster({ masters: 3, replicasPerMaster: 1 });
  }, 60_000);
  afterEach(stopAllWorkers);
  afterAll(async () => {
    await topology?.stop();
  });

  it('clients follow MOVED to the promoted replica: no CROSSSLOT, no hang, no double grant', async () => {
    const load = await LockLoad.start(topology.env, 3, 3, 'failover:lock');
    await load.progress(20);
    const slot = Number(await withClient(topology.servers[0]!, (client) => client.call('CLUSTER', 'KEYSLOT', 'lock:{failover:lock}')));
    const before = await clusterMasterOf(topology, slot);
    const promoted = before.replicas[0]!;

    const faultAt = now();
    await withClient(promoted, (client) => client.call('CLUSTER', 'FAILOVER'));
    await waitUntil(async () => (await clusterMasterOf(topology, slot)).master.port === promoted.port, 'the replica to take over the slot', 30_000);
    await load.progress(20, 30_000);

    const report = analyse('cluster', 'CLUSTER FAILOVER (manual, coordinated)', faultAt, await load.stop());
    record(report);
    expect(report.untypedErrors).toEqual([]);
    expect(report.messages.filter((message) => /CROSSSLOT/.test(message))).toEqual([]);
    expect(Number.isFinite(report.windowMs)).toBe(true);
    // A manual failover waits for the replica to catch up: no lock state is lost, so no double grant.
    expect(report.doubleGrants).toBe(0);
  }, 90_000);
});
