import { startCluster, type Topology } from 'redis-topology';
import { stopAllWorkers } from '../harness/worker-process.js';
import { manualClusterFailoverUnderLoad, record } from './load.js';

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
    const report = await manualClusterFailoverUnderLoad(topology, topology.env, 'cluster');
    record(report);
    expect(report.untypedErrors).toEqual([]);
    expect(report.messages.filter((message) => /CROSSSLOT/.test(message))).toEqual([]);
    expect(Number.isFinite(report.windowMs)).toBe(true);
    // A manual failover waits for the replica to catch up: no lock state is lost, so no double grant.
    expect(report.doubleGrants).toBe(0);
    expect(report.crowdedSections).toBe(0);
  }, 90_000);
});
