/**
 * `npm run bench:scripts`: what each library's acquire and release cost Redis itself, per server.
 *
 *   npm run bench:scripts                                   # redis and valkey-9 (when fetched), 3 000 calls
 *   npm run bench:scripts -- --servers redis,valkey-8.1,valkey-9 --only raw,ours,redis-semaphore --calls 3000 --rounds 3
 *
 * For each server and library: warm-up cycles, then `--calls` acquisitions of free locks from one
 * caller (each a new name), then their releases, each phase between CONFIG RESETSTAT and INFO
 * commandstats; and, for our library, the batch script: `--batch` acquisitions issued in one turn
 * (they travel as one script call), then their releases, the same way. Prints usec_per_call of every
 * command the phase ran (medians over --rounds), so a script's server time is read apart from the
 * client's and the network's. Writes nothing; the numbers are for comparing scripts on one server.
 */
import { parseArgs } from 'node:util';
import { adapterById, type Release } from './adapters/index.js';
import { BenchServer } from './bench-server.js';
import { chooseServers, SERVER_IDS } from './bench-servers.js';
import { machineInfo, describeMachine } from './machine.js';
import { median } from './stats.js';

interface CommandCost {
  calls: number;
  usecPerCall: number;
}

/** INFO commandstats as command -> calls and usec per call. */
async function commandStats(server: BenchServer): Promise<Map<string, CommandCost>> {
  const stats = new Map<string, CommandCost>();
  for (const match of (await server.admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=\d+,usec_per_call=([\d.]+)/gm)) {
    stats.set(match[1]!, { calls: Number(match[2]), usecPerCall: Number(match[3]) });
  }
  // The admin connection's own INFO and CONFIG are not the libraries'.
  for (const own of ['info', 'config|resetstat', 'config']) stats.delete(own);
  return stats;
}

/** Runs `work` between CONFIG RESETSTAT and INFO commandstats. */
async function measured(server: BenchServer, work: () => Promise<void>): Promise<Map<string, CommandCost>> {
  await server.admin.config('RESETSTAT');
  await work();
  return commandStats(server);
}

type Phase = Map<string, CommandCost>;

async function measureLibrary(server: BenchServer, id: string, calls: number, batch: number, round: number): Promise<Record<string, Phase>> {
  const adapter = adapterById(id);
  const session = await adapter.open(server.target);
  const phases: Record<string, Phase> = {};
  try {
    for (let i = 0; i < 200; i++) await (await session.acquire(`warm:${id}:${round}:${i}`))();
    const releases: Release[] = [];
    phases.acquire = await measured(server, async () => {
      for (let i = 0; i < calls; i++) releases.push(await session.acquire(`cost:${id}:${round}:${i}`));
    });
    phases.release = await measured(server, async () => {
      for (const release of releases) await release();
    });
    if (id.startsWith('ours') && batch > 1) {
      const held: Release[] = [];
      phases[`acquire x${batch}`] = await measured(server, async () => {
        for (let i = 0; i < calls; i += batch) {
          held.push(...(await Promise.all(Array.from({ length: Math.min(batch, calls - i) }, (_, j) => session.acquire(`batch:${id}:${round}:${i + j}`)))));
        }
      });
      phases[`release x${batch}`] = await measured(server, async () => {
        for (let i = 0; i < held.length; i += batch) await Promise.all(held.slice(i, i + batch).map((release) => release()));
      });
    }
  } finally {
    await session.close();
  }
  return phases;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      servers: { type: 'string' },
      only: { type: 'string', default: 'raw,ours,redis-semaphore,redlock,sesame-redlock' },
      calls: { type: 'string', default: '3000' },
      batch: { type: 'string', default: '32' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const requested = values.servers?.split(',').map((s) => s.trim());
  if (requested?.some((id) => !SERVER_IDS.includes(id))) throw new Error(`--servers: known ${SERVER_IDS.join(', ')}`);
  const { servers, skipped } = chooseServers(requested, false);
  const ids = values.only!.split(',').map((s) => s.trim());
  const [calls, batch, rounds] = [Number(values.calls), Number(values.batch), Number(values.rounds)];
  for (const notice of skipped) console.log(notice);
  const versions: string[] = [];
  for (const choice of servers) {
    const server = await BenchServer.start(undefined, choice.bin);
    try {
      const version = await server.version();
      versions.push(version);
      const perRound = new Map<string, Phase[]>();
      for (let round = 0; round < rounds; round++) {
        for (const id of ids) {
          await server.admin.flushdb();
          for (const [phase, stats] of Object.entries(await measureLibrary(server, id, calls, batch, round))) {
            const key = `${id}\t${phase}`;
            perRound.set(key, [...(perRound.get(key) ?? []), stats]);
          }
        }
      }
      console.log(`\n${version}: usec per call (INFO commandstats), median of ${rounds} round(s), ${calls} operations per phase from one caller`);
      console.log(['library', 'phase', 'command: calls per operation, usec per call'].join('\t'));
      for (const [key, list] of perRound) {
        const commands = [...new Set(list.flatMap((stats) => [...stats.keys()]))].sort();
        const cells = commands.flatMap((command) => {
          const costs = list.map((stats) => stats.get(command)).filter((cost) => cost !== undefined);
          // A command most rounds did not run (the one EVAL that loads a script) is no part of the cost.
          if (costs.length * 2 <= list.length) return [];
          const perOp = median(costs.map((c) => c.calls)) / calls;
          return [`${command}: ${perOp.toFixed(perOp < 0.1 ? 3 : 2)} x ${median(costs.map((c) => c.usecPerCall)).toFixed(2)} us`];
        });
        console.log(`${key}\t${cells.join('; ')}`);
      }
    } finally {
      await server.stop();
    }
  }
  console.log(`\n${describeMachine(machineInfo(versions.join(', ')))}`);
}

main().catch((error: unknown) => {
  console.error(`bench:scripts failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
