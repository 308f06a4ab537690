/**
 * `npm run bench:alloc`: bytes the JavaScript heap allocates per acquire + release of a free lock.
 *
 *   npm run bench:alloc                         # 20 000 cycles after 3 000 warm-up, 3 rounds
 *   npm run bench:alloc -- --cycles 50000 --rounds 5 --servers valkey-9
 *
 * One LockClient on ioredis (10 s lease, no request context), serial `lock(name, 10000)` then
 * `unlock()`, a new name per cycle (the names are made before the measurement). Two measurements per
 * round, one after the other:
 * - total: every byte the heap allocated, from V8's own accounting (v8.GCProfiler: the used heap before
 *   each collection minus after the previous one, plus the growth since the last); exact, whatever
 *   survives or dies;
 * - where: V8's sampling heap profiler, collected objects included, grouped by the code that allocated
 *   (the library, ioredis and its parser, Node's own); an estimate (one sample per 1 KB on average).
 */
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import { LockClient } from 'nestjs-distributed-lock';
import { BenchServer } from './bench-server.js';
import { chooseServers, SERVER_IDS } from './bench-servers.js';
import { describeMachine, machineInfo } from './machine.js';
import { median } from './stats.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

async function cycles(client: LockClient, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const handle = await client.lock(name, 10_000);
    await handle.unlock();
  }
}

/** Every byte allocated on the heap while `work` runs (see the file's comment). */
async function allocated(work: () => Promise<void>): Promise<number> {
  const profiler = new GCProfiler();
  profiler.start();
  const start = getHeapStatistics().used_heap_size;
  await work();
  const end = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let total = 0;
  let after = start;
  for (const gc of statistics) {
    total += gc.beforeGC.heapStatistics.usedHeapSize - after;
    after = gc.afterGC.heapStatistics.usedHeapSize;
  }
  return total + (end - after);
}

/** Which code a profile node's allocation belongs to. */
function owner(url: string): string {
  if (url.includes('/node_modules/ioredis/') || url.includes('/node_modules/@ioredis/') || url.includes('/node_modules/redis-parser/')) return 'ioredis';
  if (url.includes('/distributed-lock/')) return 'library';
  if (url.startsWith('node:') || url === '') return 'node';
  return 'other';
}

/** Sampled bytes per owner, and per library function, while `work` runs. */
async function sampled(work: () => Promise<void>): Promise<{ owners: Map<string, number>; functions: Map<string, number> }> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await work();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: ProfileNode } };
  session.disconnect();
  const owners = new Map<string, number>();
  const functions = new Map<string, number>();
  // A built-in (no URL: Map, Array.prototype.push...) counts for the code that called it.
  const walk = (node: ProfileNode, caller: { who: string; name: string }): void => {
    const builtin = node.callFrame.url === '' && caller.who !== 'node';
    const who = builtin ? caller.who : owner(node.callFrame.url);
    const name = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/^.*\/(distributed-lock\/dist|node_modules)\//, '')}`;
    owners.set(who, (owners.get(who) ?? 0) + node.selfSize);
    if (node.selfSize > 0) {
      const where = `${who}: ${builtin ? `${name.trim()} (built-in, from ${caller.name})` : name}`;
      functions.set(where, (functions.get(where) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, builtin ? caller : { who, name });
  };
  walk(profile.head, { who: 'node', name: '(root)' });
  return { owners, functions };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cycles: { type: 'string', default: '20000' },
      warmup: { type: 'string', default: '3000' },
      rounds: { type: 'string', default: '3' },
      servers: { type: 'string', default: 'redis' },
      top: { type: 'string', default: '12' },
    },
  });
  const count = Number(values.cycles);
  const requested = values.servers!.split(',').map((s) => s.trim());
  if (requested.some((id) => !SERVER_IDS.includes(id))) throw new Error(`--servers: known ${SERVER_IDS.join(', ')}`);
  const versions: string[] = [];
  for (const choice of chooseServers(requested, false).servers) {
    const server = await BenchServer.start(undefined, choice.bin);
    const client = await LockClient.connect({ connection: { mode: 'single', host: server.target.host, port: server.target.port } });
    try {
      const version = await server.version();
      versions.push(version);
      let batch = 0;
      const names = (n: number): string[] => Array.from({ length: n }, (_, i) => `alloc:${batch}:${i}`, batch++);
      await cycles(client, names(Number(values.warmup)));
      const totals: number[] = [];
      const shares = new Map<string, number[]>();
      let functions = new Map<string, number>();
      for (let round = 0; round < Number(values.rounds); round++) {
        const list = names(count);
        totals.push((await allocated(() => cycles(client, list))) / count);
        const second = names(count);
        const profile = await sampled(() => cycles(client, second));
        for (const [who, bytes] of profile.owners) shares.set(who, [...(shares.get(who) ?? []), bytes / count]);
        functions = profile.functions;
      }
      console.log(`\n${version}: ${count} serial lock + unlock cycles of a free lock (LockClient on ioredis), after ${values.warmup} warm-up`);
      console.log(`allocated per cycle (V8's accounting): ${median(totals).toFixed(0)} bytes (rounds: ${totals.map((t) => t.toFixed(0)).join(', ')})`);
      console.log(
        `by allocation sampling, per cycle: ${[...shares]
          .sort((a, b) => median(b[1]) - median(a[1]))
          .map(([who, list]) => `${who} ${median(list).toFixed(0)}`)
          .join(', ')} bytes`,
      );
      console.log(`the allocating functions (last round, sampled bytes per cycle):`);
      for (const [where, bytes] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
        console.log(`  ${(bytes / count).toFixed(0).padStart(6)}  ${where}`);
      }
    } finally {
      await client.close();
      await server.stop();
    }
  }
  console.log(`\n${describeMachine(machineInfo(versions.join(', ')))}`);
}

main().catch((error: unknown) => {
  console.error(`bench:alloc failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
