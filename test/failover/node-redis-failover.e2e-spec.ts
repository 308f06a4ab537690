import { currentSentinelMaster, startCluster, startSentinelTopology, waitUntil, type Topology } from 'redis-topology';
import { stopAllWorkers } from '../harness/worker-process.js';
import { analyse, LockLoad, manualClusterFailoverUnderLoad, now } from './load.js';

/** Every worker's lock client runs on the node-redis client it was given. */
function expectNodeRedis(load: LockLoad): void {
  const targets = load.workers.map((worker) => worker.messages.find((message) => message.type === 'ready')?.target);
  expect(targets).toEqual(load.workers.map(() => 'the node-redis client given in options.client'));
}

/**
 * The failovers of sentinel-failover and cluster-failover, with every worker's lock client on a
 * node-redis sentinel or cluster it was given as `client` (LOCK_TEST_CLIENT=node-redis): node-redis
 * follows the new master by itself, and the lock operations resume with typed errors only. Measured
 * here, not recorded (the README's table is ioredis').
 */
describe('node-redis as `client`: failovers under load', () => {
  afterEach(stopAllWorkers);

  describe('sentinel: the master is killed', () => {
    let topology: Topology & { masterName: string };
    beforeAll(async () => {
      topology = await startSentinelTopology({ replicas: 2, sentinels: 3, downAfterMs: 1000 });
    }, 60_000);
    afterAll(async () => {
      await topology?.stop();
    });

    it('the sentinel client follows the promoted replica, lock operations resume, errors during the switch are typed', async () => {
      const load = await LockLoad.start({ ...topology.env, LOCK_TEST_CLIENT: 'node-redis' });
      expectNodeRedis(load);
      await load.progress(20);
      const oldMaster = await currentSentinelMaster(topology);

      const faultAt = now();
      await topology.servers[0]!.kill();
      await waitUntil(async () => (await currentSentinelMaster(topology)) !== oldMaster, 'the sentinels to promote a replica', 30_000);
      await load.progress(20, 30_000); // every process is taking the lock again

      const report = analyse('sentinel (node-redis)', 'SIGKILL of the master (down-after 1 s)', faultAt, await load.stop());
      expect(report.untypedErrors).toEqual([]);
      expect(Number.isFinite(report.windowMs)).toBe(true);
    }, 90_000);
  });

  describe('cluster: CLUSTER FAILOVER of the busy lock slot', () => {
    let topology: Topology;
    beforeAll(async () => {
      topology = await startCluster({ masters: 3, replicasPerMaster: 1 });
    }, 60_000);
    afterAll(async () => {
      await topology?.stop();
    });

    it('the cluster client follows MOVED: no CROSSSLOT, no hang, no double grant', async () => {
      const report = await manualClusterFailoverUnderLoad(
        topology,
        { ...topology.env, LOCK_TEST_CLIENT: 'node-redis' },
        'cluster (node-redis)',
        expectNodeRedis,
      );
      expect(report.untypedErrors).toEqual([]);
      expect(report.messages.filter((message) => /CROSSSLOT/.test(message))).toEqual([]);
      expect(Number.isFinite(report.windowMs)).toBe(true);
      expect(report.doubleGrants).toBe(0);
      expect(report.crowdedSections).toBe(0);
    }, 90_000);
  });
});
