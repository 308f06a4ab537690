import { LockClient, type LockHandle } from 'nestjs-distributed-lock';
import { startCluster, withClient, type RedisServer } from 'redis-topology';
import { nextEvent } from '../harness/wait.js';

/**
 * One cluster master stops answering (frozen, as a master does while it fails over or swaps): the
 * renewals it should answer hang. Locks on the other masters must keep their leases: each renewal is
 * bounded by the operation timeout and the watchdog skips only the lock whose renewal is in flight.
 */
describe('cluster: one master frozen while this process holds locks on every master', () => {
  let topology: Awaited<ReturnType<typeof startCluster>>;
  let client: LockClient | undefined;
  beforeAll(async () => {
    // No replicas, and a node timeout far longer than the test: the frozen master is not failed over.
    topology = await startCluster({ masters: 3, replicasPerMaster: 0, nodeTimeoutMs: 30_000 });
  }, 60_000);
  afterEach(async () => {
    for (const master of topology.masters) master.resume();
    await client?.close();
  });
  afterAll(async () => {
    await topology?.stop();
  });

  /** A lock name whose slot `master` serves (masters own equal slot ranges in order). */
  async function nameServedBy(master: RedisServer, index: number): Promise<string> {
    const range = Math.floor(16384 / topology.masters.length);
    for (let i = 0; ; i++) {
      const name = `frozen:${index}:${i}`;
      const slot = Number(await withClient(master, (redis) => redis.call('CLUSTER', 'KEYSLOT', `lock:{${name}}`)));
      if (Math.min(Math.floor(slot / range), topology.masters.length - 1) === index) return name;
    }
  }

  it('locks on the healthy masters keep renewing; only the lock of the frozen master runs out (the control)', async () => {
    client = await LockClient.connect({ env: topology.env, watchdogTimeout: 600, operationTimeout: 5000 });
    const names = await Promise.all(topology.masters.map((master, i) => nameServedBy(master, i)));
    const handles: LockHandle[] = [];
    for (const name of names) handles.push(await client.lock(name));
    const lost: string[] = [];
    client.events.on('lost', ({ name }) => lost.push(name));

    const frozen = topology.masters[0]!;
    frozen.pause();
    // The frozen master's lock runs out: its renewal hangs (control: the fault is real).
    await nextEvent(client.events, 'lost', (event: { name: string }) => event.name === names[0], 10_000);
    // Meanwhile, and for three more leases, the others are renewed on time.
    for (let round = 0; round < 9; round++) {
      await nextEvent(client.events, 'renewed', (event: { name: string }) => event.name === names[1], 5_000);
      await nextEvent(client.events, 'renewed', (event: { name: string }) => event.name === names[2], 5_000);
    }
    expect(lost).toEqual([names[0]]);
    expect(handles.map((handle) => handle.isHeld)).toEqual([false, true, true]);

    frozen.resume();
    for (const handle of handles.slice(1)) await handle.unlock();
  }, 60_000);
});
