/**
 * `npm run bench:coverage`: what a cluster failover costs the locks that live on the other, healthy
 * masters, with `cluster-require-full-coverage yes` (Redis's default) and `no`.
 *
 * Per round and setting: a cluster of 3 masters with one replica each (cluster-node-timeout 2 s);
 * callers loop lock + unlock on names of the two masters that stay up (and, separately, of the master
 * that is killed); one master is SIGKILLed and its replica elected. Measured: the longest time with no
 * completed cycle on the healthy masters' names from the kill until 2 s after the promotion, and how
 * many calls failed there; the same for the failed master's names (its outage, for reference).
 * Rounds alternate the settings (yes, no, yes, no...); medians are printed and written to
 * results/cluster-coverage/latest.{json,md}.
 *
 *   npm run bench:coverage               # 3 rounds per setting
 *   npm run bench:coverage -- --rounds 5
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LockClient } from 'nestjs-distributed-lock';
import { clusterMasterOf, startCluster, waitUntil, withClient, type RedisServer } from 'redis-topology';
import { machineInfo } from './machine.js';
import { median } from './stats.js';

const CALLERS_PER_GROUP = 4;
const NODE_TIMEOUT_MS = 2000;
const AFTER_PROMOTION_MS = 2000;

type Setting = 'yes' | 'no';

interface GroupFigures {
  /** Longest time without a completed cycle, from the kill to AFTER_PROMOTION_MS after the promotion. */
  longestGapMs: number;
  failedCalls: number;
  cycles: number;
}

interface RoundFigures {
  setting: Setting;
  /** From the kill to the replica serving the failed master's slots. */
  promotionMs: number;
  healthy: GroupFigures;
  failed: GroupFigures;
}

/** Completed cycles and failures of one group of callers, timed. */
class Group {
  readonly completions: number[] = [];
  failures = 0;
  private stopping = false;
  private readonly loops: Promise<void>[] = [];

  constructor(
    private readonly client: LockClient,
    private readonly names: string[],
  ) {}

  start(): void {
    for (let i = 0; i < CALLERS_PER_GROUP; i++) this.loops.push(this.loop(i));
  }

  private async loop(caller: number): Promise<void> {
    for (let n = 0; !this.stopping; n++) {
      const name = this.names[(caller + n * CALLERS_PER_GROUP) % this.names.length]!;
      try {
        const handle = await this.client.lock(name, { leaseTime: 5000, waitTime: 1000 });
        await handle.unlock();
        this.completions.push(performance.now());
      } catch {
        this.failures += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  figures(from: number, to: number, failuresBefore: number): GroupFigures {
    const inWindow = this.completions.filter((t) => t >= from && t <= to);
    let longest = 0;
    let previous = from;
    for (const t of inWindow) {
      longest = Math.max(longest, t - previous);
      previous = t;
    }
    longest = Math.max(longest, to - previous);
    return { longestGapMs: Math.round(longest), failedCalls: this.failures - failuresBefore, cycles: inWindow.length };
  }
}

/** `count` lock names whose slots `master` serves, found by asking it (CLUSTER KEYSLOT against its ranges). */
async function namesServedBy(master: RedisServer, index: number, masters: number, count: number): Promise<string[]> {
  const range = Math.floor(16384 / masters);
  const names: string[] = [];
  for (let i = 0; names.length < count; i++) {
    const name = `coverage:${index}:${i}`;
    const slot = Number(await withClient(master, (redis) => redis.call('CLUSTER', 'KEYSLOT', `lock:{${name}}`)));
    if (Math.min(Math.floor(slot / range), masters - 1) === index) names.push(name);
  }
  return names;
}

async function round(setting: Setting): Promise<RoundFigures> {
  const topology = await startCluster({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS, args: ['--cluster-require-full-coverage', setting] });
  const client = await LockClient.connect({ env: topology.env, operationTimeout: 1000 });
  try {
    const [victim, ...healthyMasters] = topology.masters as [RedisServer, ...RedisServer[]];
    const healthyNames = (await Promise.all(healthyMasters.map((master, i) => namesServedBy(master, i + 1, 3, 8)))).flat();
    const victimNames = await namesServedBy(victim, 0, 3, 8);
    const victimSlot = Number(await withClient(victim, (redis) => redis.call('CLUSTER', 'KEYSLOT', `lock:{${victimNames[0]}}`)));
    const { replicas } = await clusterMasterOf(topology, victimSlot);
    const healthy = new Group(client, healthyNames);
    const failed = new Group(client, victimNames);
    healthy.start();
    failed.start();
    await waitUntil(async () => healthy.completions.length > 50 && failed.completions.length > 50, 'both groups to run', 20_000);
    const [healthyFailures, failedFailures] = [healthy.failures, failed.failures];
    const killedAt = performance.now();
    victim.killNow();
    await waitUntil(async () => (await clusterMasterOf(topology, victimSlot)).master.port === replicas[0]!.port, 'the promotion', 30_000);
    const promotedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, AFTER_PROMOTION_MS));
    const end = promotedAt + AFTER_PROMOTION_MS;
    await Promise.all([healthy.stop(), failed.stop()]);
    return {
      setting,
      promotionMs: Math.round(promotedAt - killedAt),
      healthy: healthy.figures(killedAt, end, healthyFailures),
      failed: failed.figures(killedAt, end, failedFailures),
    };
  } finally {
    await client.close();
    await topology.stop();
  }
}

function summary(runs: RoundFigures[], setting: Setting): Record<string, number> {
  const of = runs.filter((run) => run.setting === setting);
  return {
    rounds: of.length,
    promotionMs: median(of.map((run) => run.promotionMs)),
    healthyLongestGapMs: median(of.map((run) => run.healthy.longestGapMs)),
    healthyFailedCalls: median(of.map((run) => run.healthy.failedCalls)),
    failedMasterLongestGapMs: median(of.map((run) => run.failed.longestGapMs)),
    failedMasterFailedCalls: median(of.map((run) => run.failed.failedCalls)),
  };
}

async function main(): Promise<void> {
  const roundsArg = process.argv.indexOf('--rounds');
  const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 3;
  const startedAt = new Date().toISOString();
  const machine = machineInfo('the redis-server on PATH');
  const runs: RoundFigures[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const setting of ['yes', 'no'] as const) {
      const figures = await round(setting);
      runs.push(figures);
      console.log(
        `round ${i + 1}, cluster-require-full-coverage ${setting}: promotion ${figures.promotionMs} ms; healthy masters: longest gap ${figures.healthy.longestGapMs} ms, ` +
          `${figures.healthy.failedCalls} failed calls; failed master: longest gap ${figures.failed.longestGapMs} ms`,
      );
    }
  }
  const result = { startedAt, finishedAt: new Date().toISOString(), machine, settings: { yes: summary(runs, 'yes'), no: summary(runs, 'no') }, runs };
  const out = join('results', 'cluster-coverage');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  const rows = (['yes', 'no'] as const).map((setting) => {
    const s = result.settings[setting];
    return `| \`${setting}\` | ${s.promotionMs} | ${s.healthyLongestGapMs} | ${s.healthyFailedCalls} | ${s.failedMasterLongestGapMs} | ${s.failedMasterFailedCalls} |`;
  });
  const table = [
    `Cluster failover and the healthy masters' locks: medians of ${rounds} rounds per setting (${startedAt}; load average ${machine.loadAverageAtStart.join(' / ')})`,
    '',
    '| cluster-require-full-coverage | kill to promotion (ms) | healthy masters: longest gap (ms) | healthy masters: failed calls | failed master: longest gap (ms) | failed master: failed calls |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(join(out, 'latest.md'), table);
  console.log(`\n${table}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
