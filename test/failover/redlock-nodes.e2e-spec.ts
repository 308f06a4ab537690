import { LockClient, LockQuorumError } from 'nestjs-distributed-lock';
import { startIndependentNodes, withClient, type Topology } from 'redis-topology';
import { stopAllWorkers } from '../harness/worker-process.js';
import { analyse, LockLoad, now, record } from './load.js';

describe('redlock: independent nodes going down', () => {
  let topology: Topology;
  const clients: LockClient[] = [];
  const client = async (): Promise<LockClient> => {
    const created = await LockClient.connect({ env: topology.env });
    clients.push(created);
    return created;
  };

  beforeAll(async () => {
    topology = await startIndependentNodes(3);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await topology?.stop();
  });

  it('control: the same load without the lock shows double holders, by the shared clock and by the inside set', async () => {
    const load = await LockLoad.start({ ...topology.env, NO_LOCK: '1' }, 3, 3, 'failover:control');
    try {
      await load.progress(20);
      const report = analyse('redlock (control)', 'none: no lock taken', now(), await load.stop());
      expect(report.doubleGrants).toBeGreaterThan(0);
      expect(report.crowdedSections).toBeGreaterThan(0);
    } finally {
      await stopAllWorkers();
    }
  });

  it('one of three nodes killed under load: operations go on, errors are typed, no double grant', async () => {
    const load = await LockLoad.start(topology.env);
    try {
      await load.progress(20);
      const faultAt = now();
      await topology.servers[2]!.kill();
      await load.progress(20, 30_000);
      const report = analyse('redlock', 'SIGKILL of one of three nodes', faultAt, await load.stop());
      record(report);
      expect(report.untypedErrors).toEqual([]);
      expect(report.doubleGrants).toBe(0);
      expect(report.crowdedSections).toBe(0);
    } finally {
      await stopAllWorkers();
      await topology.servers[2]!.restart();
    }
  }, 90_000);

  it('with one of three nodes down, locks are still granted, with increasing tokens, and released everywhere', async () => {
    const locks = await client();
    await topology.servers[2]!.kill();
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const handle = await locks.lock('rl:a');
      tokens.push(handle.token);
      await handle.unlock();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    const waiter = locks.lock('rl:a', { waitTime: '5s' });
    await expect(waiter.then((h) => h.unlock())).resolves.toBeUndefined();
  });

  it('a client starts with one node down (a majority is reachable)', async () => {
    const late = await client();
    const handle = await late.lock('rl:b');
    await handle.unlock();
  });

  it('with two of three nodes down: a typed quorum error, and no partial lock left on the live node', async () => {
    const locks = await client();
    await topology.servers[1]!.kill();
    const immediate = (await locks.tryLock('rl:c').catch((e: unknown) => e)) as LockQuorumError;
    expect(immediate).toBeInstanceOf(LockQuorumError);
    expect(immediate.code).toBe('LOCK_QUORUM_FAILED');
    expect(immediate).toMatchObject({ answered: 1, nodes: 3 });
    const waited = await locks.lock('rl:c', { waitTime: 300 }).catch((e: unknown) => e);
    expect(waited).toBeInstanceOf(LockQuorumError);
    expect(await withClient(topology.servers[0]!, (c) => c.exists('lock:{rl:c}'))).toBe(0);
  });

  it('when the nodes come back, locks work again', async () => {
    await topology.servers[1]!.restart();
    await topology.servers[2]!.restart();
    const locks = clients[0]!;
    const handle = await locks.lock('rl:d', { waitTime: '10s' });
    expect(await locks.isLocked('rl:d')).toBe(true);
    await handle.unlock();
    expect(await locks.isLocked('rl:d')).toBe(false);
  });
});
