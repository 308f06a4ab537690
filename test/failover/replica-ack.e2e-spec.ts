import { LockClient, ReplicaAckError } from 'nestjs-distributed-lock';
import { startMasterReplicas, withClient, type Topology } from 'redis-topology';
import { nextEvent } from '../harness/wait.js';

describe('replica acknowledgement (WAIT) in master-slave mode', () => {
  let topology: Topology;
  const clients: LockClient[] = [];
  const client = async (options: ConstructorParameters<typeof LockClient>[0] = {}): Promise<LockClient> => {
    const created = await LockClient.connect({ ...options, env: topology.env });
    clients.push(created);
    return created;
  };
  const masterHas = (key: string): Promise<number> => withClient(topology.servers[0]!, (c) => c.exists(key));
  const pauseReplicas = (): void => topology.servers.slice(1).forEach((replica) => replica.pause());
  const resumeReplicas = (): void => topology.servers.slice(1).forEach((replica) => replica.resume());

  beforeAll(async () => {
    topology = await startMasterReplicas(2);
  });
  afterEach(async () => {
    resumeReplicas();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    await topology?.stop();
  });

  it('with the replicas up, acquisitions are confirmed by both', async () => {
    const locks = await client({ replicaAck: { replicas: 2, timeout: 500 } });
    const handle = await locks.lock('ack:a');
    expect(await masterHas('lock:{ack:a}')).toBe(1);
    await handle.unlock();
  });

  it('with the replicas stopped, the acquisition fails with a typed error and is undone on the master', async () => {
    const locks = await client({ replicaAck: { replicas: 1, timeout: 100 } });
    pauseReplicas();
    const error = (await locks.tryLock('ack:b').catch((e: unknown) => e)) as ReplicaAckError;
    expect(error).toBeInstanceOf(ReplicaAckError);
    expect(error.code).toBe('LOCK_REPLICA_ACK_FAILED');
    expect(error).toMatchObject({ acknowledged: 0, required: 1 });
    expect(await masterHas('lock:{ack:b}')).toBe(0);
    expect(locks.stats().held).toBe(0);
    // A caller that waits keeps retrying until its wait is over, then gets the same typed error.
    await expect(locks.lock('ack:b', { waitTime: 300 })).rejects.toBeInstanceOf(ReplicaAckError);
    expect(await masterHas('lock:{ack:b}')).toBe(0);
  });

  it('per lock: replicaAck false skips it; the environment sets the default', async () => {
    const locks = await LockClient.connect({ env: { ...topology.env, DISTRIBUTED_LOCK_REPLICA_ACK: '2', DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT: '100ms' } });
    clients.push(locks);
    pauseReplicas();
    await expect(locks.tryLock('ack:c')).rejects.toBeInstanceOf(ReplicaAckError);
    const handle = await locks.lock('ack:c', { replicaAck: false });
    await handle.unlock();
  });

  it('renewals the replicas do not confirm do not extend the lease: the holder is told at its deadline', async () => {
    const locks = await client({ replicaAck: { replicas: 1, timeout: 50 }, watchdogTimeout: 600 });
    const handle = await locks.lock('ack:d');
    pauseReplicas();
    const [lost] = await nextEvent(locks.events, 'lost');
    expect(lost).toMatchObject({ name: 'ack:d', reason: 'lease-expired' });
    expect(handle.signal.aborted).toBe(true);
  });
});
