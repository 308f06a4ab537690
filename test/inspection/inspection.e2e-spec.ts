import { execFile } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { LockClient, type LockHandle, type LockInspection } from 'nestjs-distributed-lock';
import { startCluster, startSingle, withClient, type Topology } from 'redis-topology';
import { until } from '../harness/wait.js';

const CLI = fileURLToPath(new URL('../../libs/distributed-lock/dist/cli/main.js', import.meta.url));
const HERE = `${hostname()}:${process.pid}`;

/** Runs the built command-line inspector with the topology's DISTRIBUTED_LOCK_REDIS_* variables (nothing inherited). */
function cli(topology: Topology, args: string[], input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^DISTRIBUTED_LOCK_/.test(name)));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { ...inherited, ...topology.env }, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

const labels = (inspection: LockInspection): string[] => inspection.waiting.map((waiter) => waiter.instance.label);

/** Whether every process the inspection names has its label (an unregistered one reads `client <id>`). */
const registered = (inspection: LockInspection): boolean =>
  [inspection.holder, ...inspection.readers, ...inspection.permitHolders, ...inspection.waiting].every(
    (who) => who === undefined || !who.instance.label.startsWith('client '),
  );

/**
 * The inspection once every process in it has its label. A process registers its label at its first
 * lock call, in the background; in a cluster the registration and the lock live on different masters,
 * so the lock can show in Redis a moment before the label does.
 */
async function labelled(read: () => Promise<LockInspection>): Promise<LockInspection> {
  let seen: LockInspection | undefined;
  await until(async () => registered((seen = await read())), 'every process in the inspection to have its label');
  return seen!;
}

describe.each([
  ['single', () => startSingle()],
  ['cluster', () => startCluster({ masters: 3, replicasPerMaster: 0 })],
] as const)('lock inspection and the command-line inspector (%s)', (_mode, start) => {
  let topology: Topology;
  const clients: LockClient[] = [];
  const connect = async (instanceName: string): Promise<LockClient> => {
    const client = await LockClient.connect({ env: topology.env, instanceName });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    topology = await start();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  afterAll(async () => {
    await topology?.stop();
  });

  it('a plain lock: holder with its process, holds, token, time held, lease, watchdog; waiting processes in order', async () => {
    const [holder, b, c] = await Promise.all([connect('holder'), connect('waiter-b'), connect('waiter-c')]);
    const [first, again] = await holder.runInNewContext(async () => [await holder.lock('inspect:plain'), await holder.lock('inspect:plain')]); // reentrant: 2 holds, one token
    const waitB = b.lock('inspect:plain', { waitTime: '10s' });
    await until(async () => (await holder.inspect('inspect:plain')).waiting.length === 1, 'b to be marked as waiting');
    const waitC = c.lock('inspect:plain', { waitTime: '10s' });
    await until(async () => (await holder.inspect('inspect:plain')).waiting.length === 2, 'c to be marked as waiting');

    const seen = await labelled(() => b.inspect('inspect:plain'));
    expect(seen).toMatchObject({ name: 'inspect:plain', kind: 'reentrant', locked: true, readers: [], waitingHere: 1, lastToken: first!.token });
    expect(seen.holder).toMatchObject({
      holds: 2,
      token: first!.token,
      watchdog: true,
      grant: false,
      instance: { label: `holder@${HERE}`, instanceName: 'holder', self: false },
    });
    expect(seen.holder!.owner.startsWith(`${seen.holder!.instance.clientId}:`)).toBe(true);
    expect(seen.holder!.heldForMs).toBeGreaterThanOrEqual(0);
    expect(seen.holder!.heldForMs).toBeLessThan(10_000);
    expect(seen.holder!.remainingLeaseMs).toBeGreaterThan(20_000);
    expect(labels(seen)).toEqual([`waiter-b@${HERE}`, `waiter-c@${HERE}`]);
    expect(seen.waiting.map((waiter) => waiter.instance.self)).toEqual([true, false]);

    // The next holder is the process that waited longest, and its own hold says how it is renewed.
    await again!.unlock();
    await first!.unlock();
    const byB = await waitB;
    const after = await labelled(() => holder.inspect('inspect:plain'));
    expect(after.holder).toMatchObject({ token: byB.token, holds: 1, instance: { label: `waiter-b@${HERE}` } });
    expect(labels(after)).toEqual([`waiter-c@${HERE}`]);
    await byB.unlock();
    await (await waitC).unlock();

    const leased = await holder.lock('inspect:leased', '5s');
    expect((await holder.inspect('inspect:leased')).holder).toMatchObject({ watchdog: false, instance: { self: true } });
    await leased.unlock();
    expect(await holder.inspect('inspect:leased')).toMatchObject({ locked: false, holder: undefined, remainingLeaseMs: -2, waiting: [] });
  });

  it('a fair lock shows its queue in order; a read-write lock its readers and the local writer waiting', async () => {
    const [a, b, c] = await Promise.all([connect('fair-a'), connect('fair-b'), connect('fair-c')]);
    const fair = await a.getFairLock('inspect:fair').lock();
    const queued = [b.getFairLock('inspect:fair').lock({ waitTime: '10s' })];
    await until(async () => (await a.getFairLock('inspect:fair').inspect()).waiting.length === 1, 'b to queue');
    queued.push(c.getFairLock('inspect:fair').lock({ waitTime: '10s' }));
    await until(async () => (await a.getFairLock('inspect:fair').inspect()).waiting.length === 2, 'c to queue');
    const queue = await labelled(() => a.inspect('inspect:fair'));
    expect(queue.kind).toBe('fair');
    expect(labels(queue)).toEqual([`fair-b@${HERE}`, `fair-c@${HERE}`]);
    expect(queue.waiting[0]!.owner!.startsWith(queue.waiting[0]!.instance.clientId)).toBe(true);
    expect(queue.waiting[0]!.expiresInMs).toBeGreaterThan(0);
    await fair.unlock();
    for (const pending of queued) await (await pending).unlock();

    const readers: LockHandle[] = [await a.getReadWriteLock('inspect:rw').readLock().lock(), await b.getReadWriteLock('inspect:rw').readLock().lock('5s')];
    const writer = c.getReadWriteLock('inspect:rw').writeLock().lock({ waitTime: '10s' });
    await until(() => c.stats().waitingChannels === 1, 'the writer to wait');
    const rw = await labelled(() => c.getReadWriteLock('inspect:rw').inspect());
    expect(rw).toMatchObject({ kind: 'read-write', locked: true, holder: undefined, waitingHere: 1 });
    expect(rw.readers.map((reader) => [reader.instance.label, reader.token, reader.watchdog])).toEqual(
      expect.arrayContaining([
        [`fair-a@${HERE}`, readers[0]!.token, true],
        [`fair-b@${HERE}`, readers[1]!.token, false],
      ]),
    );
    for (const reader of readers) await reader.unlock();
    const written = await writer;
    expect((await labelled(() => a.inspect('inspect:rw'))).holder).toMatchObject({ token: written.token, instance: { label: `fair-c@${HERE}` } });
    await written.unlock();
  });

  it('a semaphore: its size and use, each acquisition (process, permits, token, renewal), the callers in line with what they ask; listed, tabled, not force-unlocked', async () => {
    const [a, b, c] = await Promise.all([connect('sem-a'), connect('sem-b'), connect('sem-c')]);
    const semaphore = (client: LockClient) => client.getSemaphore('inspect:sem', { size: 3 });
    const two = await semaphore(a).acquire(2);
    const one = await semaphore(b).acquire(1, '20s');
    const asksTwo = semaphore(c).acquire(2, { waitTime: '10s' });
    await until(async () => (await semaphore(a).inspect()).waiting.length === 1, 'c to queue');

    const seen = await labelled(() => b.inspect('inspect:sem')); // no kind given: the kind in use under the name
    expect(seen).toMatchObject({ name: 'inspect:sem', kind: 'semaphore', locked: true, holder: undefined, readers: [], lastToken: one.token });
    expect(seen.semaphore).toEqual({ size: 3, used: 3, available: 0 });
    expect(seen.permitHolders.map((h) => [h.instance.label, h.permits, h.token, h.watchdog, h.holds])).toEqual([
      [`sem-b@${HERE}`, 1, one.token, false, 1], // the lease that ends first comes first
      [`sem-a@${HERE}`, 2, two.token, true, 1],
    ]);
    expect(seen.permitHolders[1]!.remainingLeaseMs).toBeGreaterThan(20_000);
    expect(seen.remainingLeaseMs).toBe(seen.permitHolders[1]!.remainingLeaseMs);
    expect(seen.waiting).toEqual([expect.objectContaining({ position: 1, permits: 2, instance: expect.objectContaining({ label: `sem-c@${HERE}` }) })]);
    expect(seen.waiting[0]!.owner!.startsWith(`${seen.waiting[0]!.instance.clientId}:`)).toBe(true);
    expect(seen.waiting[0]!.expiresInMs).toBeGreaterThan(0);
    expect((await c.inspect('inspect:sem', 'semaphore')).waitingHere).toBe(1);

    expect((await a.list('inspect:sem*')).map((found) => [found.name, found.kind])).toEqual([['inspect:sem', 'semaphore']]);
    const table = await cli(topology, ['list', 'inspect:sem*']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`inspect:sem +semaphore 3/3 +sem-b@${HERE} +1 permit +${one.token} .* lease +1: sem-c@${HERE} \\(2\\)`));
    expect(table.stdout).toMatch(new RegExp(`sem-a@${HERE} +2 permits +${two.token} .* watchdog`));
    const details = await cli(topology, ['inspect', 'inspect:sem']);
    expect(details.stdout).toContain('permits     3 of 3 used, 0 available');
    expect(details.stdout).toMatch(/waiting +1\. sem-c@.* asks 2 permits/);
    const refused = await cli(topology, ['force-unlock', 'inspect:sem', '--yes']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('"inspect:sem" is a semaphore');
    expect((await cli(topology, ['force-unlock', 'inspect:sem', '--kind', 'semaphore'])).code).toBe(2);
    expect((await semaphore(a).inspect()).permitHolders).toHaveLength(2); // nothing was changed

    await one.release();
    await two.release();
    const third = await asksTwo;
    expect((await labelled(() => semaphore(a).inspect())).permitHolders.map((h) => [h.instance.label, h.permits, h.token])).toEqual([
      [`sem-c@${HERE}`, 2, third.token],
    ]);
    await third.release();
    expect(await semaphore(a).inspect()).toMatchObject({
      locked: false,
      permitHolders: [],
      waiting: [],
      remainingLeaseMs: -2,
      semaphore: { size: 3, used: 0, available: 3 },
    });
    expect(await a.list('inspect:sem*')).toEqual([]); // a free semaphore is not listed (its size stays in Redis)
  });

  it('list finds held locks by SCAN on every master, by pattern and up to a limit; free locks are not listed', async () => {
    const client = await connect('lister');
    const names = ['list:a', 'list:b', 'list:c', 'list:d', 'list:e', 'list:f'];
    if (topology.mode === 'cluster') {
      const slots = await withClient(topology.servers[0]!, (redis) => Promise.all(names.map((name) => redis.call('CLUSTER', 'KEYSLOT', `lock:{${name}}`))));
      expect(new Set((slots as number[]).map((slot) => Math.floor(slot / (16384 / 3)))).size).toBeGreaterThan(1); // on several masters
    }
    const handles = await Promise.all(names.map((name) => client.lock(name, '20s')));
    await (await client.lock('list:freed')).unlock();
    const fair = await client.getFairLock('list:fair').lock();
    expect((await client.list('list:*')).map((lock) => [lock.name, lock.kind])).toEqual([...names.map((name) => [name, 'reentrant']), ['list:fair', 'fair']]);
    expect((await client.list('list:[ab]')).map((lock) => lock.name)).toEqual(['list:a', 'list:b']);
    expect(await client.list('list:*', { limit: 2 })).toHaveLength(2);
    await expect(client.list('list:{x}')).rejects.toMatchObject({ code: 'LOCK_INVALID_ARGUMENT' });

    const table = await cli(topology, ['list', 'list:*']);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^LOCK +KIND +HOLDER +HOLDS +TOKEN +HELD +LEASE LEFT +RENEWAL +WAITING$/);
    for (const [i, name] of names.entries()) expect(table.stdout).toMatch(new RegExp(`${name} +reentrant +lister@${HERE} +1 +${handles[i]!.token} .* lease`));
    expect(table.stdout).not.toContain('list:freed');
    const json = await cli(topology, ['inspect', 'list:fair', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'list:fair', kind: 'fair', holder: { token: fair.token, watchdog: true } });
    const watched = await cli(topology, ['watch', 'list:a', '--count', '2', '--interval', '50ms']);
    expect(watched.stdout.match(/nestjs-distributed-lock watch/g)).toHaveLength(2);
    expect(watched.stdout).toContain(`list:a  reentrant  lister@${HERE}`);
    await Promise.all([...handles, fair].map((handle) => handle.unlock()));
  });

  it('listNames pages through names without inspecting them; listInstances names the registered processes; local waits are timed', async () => {
    const [a, b] = await Promise.all([connect('names-a'), connect('names-b')]);
    const names = ['names:1', 'names:2', 'names:3', 'names:4', 'names:5'];
    const handles = await Promise.all(names.map((name) => a.lock(name, '20s')));
    const rw = await a.getReadWriteLock('names:rw').readLock().lock();
    const listed = await b.listNames('names:*');
    expect(listed).toEqual({
      truncated: false,
      names: [...names.map((name) => ({ name, kinds: ['reentrant'] })), { name: 'names:rw', kinds: ['read-write'] }],
    });
    const first = await b.listNames('names:*', { limit: 2 });
    expect({ count: first.names.length, truncated: first.truncated }).toEqual({ count: 2, truncated: true });
    await expect(b.listNames('names:*', { limit: 0 })).rejects.toMatchObject({ code: 'LOCK_INVALID_ARGUMENT' });
    await expect(b.listNames('{x}')).rejects.toMatchObject({ code: 'LOCK_INVALID_ARGUMENT' });

    // b waits in two callers: its inspection times them, longest first; a sees b's mark but no times.
    const waits = [b.runInNewContext(() => b.lock('names:1', { waitTime: '10s' }))];
    await until(async () => (await a.inspect('names:1')).waiting.length === 1, 'b to be marked as waiting');
    waits.push(b.runInNewContext(() => b.lock('names:1', { waitTime: '10s' })));
    await until(async () => (await b.inspect('names:1')).waitingHere === 2, 'both callers of b to wait');
    const timed = await b.inspect('names:1');
    expect(timed.waitingHereForMs).toHaveLength(2);
    expect(timed.waitingHereForMs[0]).toBeGreaterThanOrEqual(timed.waitingHereForMs[1]!);
    expect((await a.inspect('names:1')).waitingHereForMs).toEqual([]);

    let instances: Awaited<ReturnType<LockClient['listInstances']>> = [];
    await until(async () => (instances = await a.listInstances()).filter((i) => i.instanceName?.startsWith('names-')).length === 2, 'both registrations');
    const mine = instances.filter((instance) => instance.instanceName?.startsWith('names-'));
    expect(mine.map((instance) => [instance.label, instance.self, instance.pid])).toEqual([
      [`names-a@${HERE}`, true, process.pid],
      [`names-b@${HERE}`, false, process.pid],
    ]);
    await Promise.all([...handles, rw].map((handle) => handle.unlock()));
    await Promise.all(waits.map(async (wait) => (await wait).unlock()));
  });

  it('force-unlock shows the holder and asks for the name; anything else changes nothing', async () => {
    const client = await connect('forced');
    const held = await client.lock('inspect:forced', '20s');
    const refused = await cli(topology, ['force-unlock', 'inspect:forced'], 'no\n');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`holder      forced@${HERE}`);
    expect(refused.stdout).toContain('Not confirmed: nothing was changed.');
    expect((await client.inspect('inspect:forced')).holder?.token).toBe(held.token);
    const done = await cli(topology, ['force-unlock', 'inspect:forced'], 'inspect:forced\n');
    expect(done).toMatchObject({ code: 0, stderr: '' });
    expect(done.stdout).toContain('"inspect:forced" was force-unlocked');
    expect((await client.inspect('inspect:forced')).locked).toBe(false);
    expect((await cli(topology, ['inspect'])).code).toBe(2); // usage: a name is needed
  });
});
