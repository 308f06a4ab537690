import { setTimeout as sleep } from 'node:timers/promises';
import type { LeaderElection, LeaderElectionOptions, Leadership, LeadershipRevoked, LockClient } from 'nestjs-distributed-lock';
import { stopAllWorkers, WorkerProcess } from '../../harness/worker-process.js';
import { nextEvent, until } from '../../harness/wait.js';
import { itAcrossProcesses, itFull, type ModeFixture } from '../fixture.js';

/** A resource that refuses writes fenced with a lower term than it has seen. */
class FencedResource {
  highest = 0;
  write(term: number): boolean {
    if (term < this.highest) return false;
    this.highest = term;
    return true;
  }
}

/** One action of a leader: which term, which candidate, when (one clock: this process's). */
type Action = { term: number; who: string; at: number };

/**
 * The checker: the actions of each term (or, for the control, of each candidate) span an interval;
 * two intervals that overlap are two leaders acting at once. Returns every overlapping pair.
 */
function overlaps(actions: Action[], by: (action: Action) => string): [string, string][] {
  const spans = new Map<string, { from: number; to: number }>();
  for (const action of actions) {
    const key = by(action);
    const span = spans.get(key);
    spans.set(key, span ? { from: Math.min(span.from, action.at), to: Math.max(span.to, action.at) } : { from: action.at, to: action.at });
  }
  const sorted = [...spans.entries()].sort(([, a], [, b]) => a.from - b.from);
  const found: [string, string][] = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]![1].from <= sorted[i]![1].to; j++) found.push([sorted[i]![0], sorted[j]![0]]);
  }
  return found;
}

/** A leader's work: act every few ms while it leads, recording each action. */
function actEvery(who: string, actions: Action[]): (leadership: Leadership) => Promise<void> {
  return async (leadership) => {
    while (leadership.isLeader) {
      actions.push({ term: leadership.term, who, at: performance.now() });
      await sleep(2, undefined, { signal: leadership.signal }).catch(() => undefined);
    }
  };
}

export function leaderElectionSuite(fx: ModeFixture): void {
  describe('leader election', () => {
    afterEach(stopAllWorkers);

    const stand = (client: LockClient, name: string, options: LeaderElectionOptions = {}): LeaderElection => client.elect(name, options);
    /** The first of `elections` to be elected from now on, with its term (listeners removed once one is). */
    const electedWith = (elections: LeaderElection[]): Promise<[LeaderElection, Leadership]> =>
      new Promise((resolve) => {
        const listeners = elections.map((election) => {
          const listener = (leadership: Leadership): void => {
            elections.forEach((each, i) => each.off('elected', listeners[i]!));
            resolve([election, leadership]);
          };
          election.on('elected', listener);
          return listener;
        });
      });
    const electedAmong = (elections: LeaderElection[]): Promise<LeaderElection> => electedWith(elections).then(([election]) => election);

    it('one leader among three candidates; resign hands the leadership to a waiting candidate at once, with a higher term', async () => {
      const clients = [await fx.client(), await fx.client(), await fx.client()];
      const elections = clients.map((client) => stand(client, 'elect:basic'));
      await until(() => elections.some((election) => election.isLeader), 'a leader');
      const first = elections.find((election) => election.isLeader)!;
      expect(elections.filter((election) => election.isLeader)).toHaveLength(1);
      const firstTerm = first.term!;
      const firstSignal = first.leadership!.signal;
      const others = elections.filter((election) => election !== first);
      const next = electedAmong(others);
      const revoked = nextEvent<[LeadershipRevoked]>(first, 'revoked');
      const resignedAt = performance.now();
      await first.resign();
      const second = await next;
      // At once: the lease is the 30 s watchdog timeout; a hand-over takes a round trip or two.
      expect(performance.now() - resignedAt).toBeLessThan(1000);
      expect((await revoked)[0]).toEqual({ name: 'elect:basic', term: firstTerm, reason: 'resigned' });
      expect(firstSignal.aborted).toBe(true);
      expect(first.isLeader).toBe(false);
      expect(first.standing).toBe(false);
      expect(second.term!).toBeGreaterThan(firstTerm);
      expect(elections.filter((election) => election.isLeader)).toEqual([second]);
      await Promise.all(elections.map((election) => election.resign()));
      await until(() => clients.every((client) => client.stats().waitingChannels === 0), 'the waiters to unsubscribe');
      for (const client of clients) expect(client.stats()).toEqual({ held: 0, renewing: 0, waitingChannels: 0 });
      // A resigned waiter withdraws its process in the background (a grant addressed to it is passed
      // on); close() waits for that work, so nothing may be left once every client has closed.
      await Promise.all(clients.map((client) => client.close()));
      expect(await fx.keyExistsAnywhere('lock:{leader:elect:basic}')).toBe(false);
    });

    describe('checker: the actions of two terms never overlap in time', () => {
      itFull(fx)('control: candidates that act without the election overlap', async () => {
        const actions: Action[] = [];
        const stop = new AbortController();
        const fake = (who: string): Leadership =>
          ({
            term: 0,
            name: who,
            signal: stop.signal,
            get isLeader() {
              return !stop.signal.aborted;
            },
            throwIfLost() {},
          }) as unknown as Leadership;
        const running = ['a', 'b', 'c'].map((who) => actEvery(who, actions)(fake(who)));
        await until(() => new Set(actions.map((action) => action.who)).size === 3 && actions.length >= 9, 'every candidate to act');
        stop.abort();
        await Promise.all(running);
        expect(overlaps(actions, (action) => action.who).length).toBeGreaterThan(0);
      });

      itFull(fx)('with the election: terms follow each other as leaders resign and stand again', async () => {
        const clients = [await fx.client(), await fx.client(), await fx.client()];
        const actions: Action[] = [];
        const elections = clients.map((client, i) => stand(client, 'elect:checked', { onElected: actEvery(`c${i}`, actions) }));
        for (let round = 0; round < 4; round++) {
          await until(() => elections.some((election) => election.isLeader), 'a leader');
          const leader = elections.find((election) => election.isLeader)!;
          const term = leader.term!;
          await until(() => actions.filter((action) => action.term === term).length >= 3, 'the leader to act');
          const index = elections.indexOf(leader);
          await leader.resign();
          elections[index] = stand(clients[index]!, 'elect:checked', { onElected: actEvery(`c${index}`, actions) });
        }
        await Promise.all(elections.map((election) => election.resign()));
        expect(new Set(actions.map((action) => action.term)).size).toBeGreaterThanOrEqual(4);
        expect(overlaps(actions, (action) => String(action.term))).toEqual([]);
      });
    });

    itFull(fx)('a leader whose lease is lost is told (signal, isLeader, throwIfLost); the next term is higher, so its fenced writes are refused', async () => {
      const leaderClient = await fx.client({ watchdogTimeout: 600 });
      const other = await fx.client();
      const resource = new FencedResource();
      const first = stand(leaderClient, 'elect:lost');
      await nextEvent(first, 'elected');
      const old = first.leadership!;
      expect(resource.write(old.term)).toBe(true);
      const second = stand(other, 'elect:lost');
      const revoked = nextEvent<[LeadershipRevoked]>(first, 'revoked');
      // RedLock keeps no waiting order between processes: the deposed candidate, standing again at once,
      // may win the next term (under load it did). Elsewhere the waiting candidate is served first.
      const next = electedWith(fx.mode === 'redlock' ? [first, second] : [second]);
      await other.forceUnlock('leader:elect:lost'); // the lease is gone in Redis (as after a long pause)
      // The term as elected: the deposed candidate's new term (600 ms watchdog) may be lost again at once
      // on a loaded machine (a RedLock acquisition that outlasted the lease's validity: CI beside a busy
      // process), and `leadership` says undefined as soon as it is.
      const [winner, newer] = await next;
      expect((await revoked)[0].reason).toMatch(/force-unlocked|not-owner/);
      expect(old.signal.aborted).toBe(true);
      expect(old.isLeader).toBe(false);
      expect(() => old.throwIfLost()).toThrow(expect.objectContaining({ code: 'LOCK_LOST' }));
      expect(newer.term).toBeGreaterThan(old.term);
      expect(resource.write(newer.term)).toBe(true);
      expect(resource.write(old.term)).toBe(false);
      // The other candidate stands (again): it waits behind the new leader.
      const waiting = winner === first ? second : first;
      expect(waiting.standing).toBe(true);
      await winner.resign();
      await until(() => (waiting.leadership?.term ?? 0) > newer.term, 'the waiting candidate to lead, with a higher term');
      await waiting.resign();
    });

    itFull(fx)('stepDownWhenDone: the term lasts as long as the work; the candidate then stands again', async () => {
      const [a, b] = [await fx.client(), await fx.client()];
      let runs = 0;
      const worker = stand(a, 'elect:step', { stepDownWhenDone: true, standAgainAfter: '20ms', onElected: async () => void runs++ });
      const [firstTerm] = await nextEvent<[Leadership]>(worker, 'elected');
      const revoked = nextEvent<[LeadershipRevoked]>(worker, 'revoked');
      const again = nextEvent<[Leadership]>(worker, 'elected');
      expect((await revoked)[0].reason).toBe('resigned');
      expect((await again)[0].term).toBeGreaterThan(firstTerm.term);
      // With another candidate waiting, a step-down hands it over.
      const rival = stand(b, 'elect:step');
      await nextEvent(rival, 'elected');
      expect(runs).toBeGreaterThanOrEqual(2);
      await Promise.all([worker.resign(), rival.resign()]);
    });

    itAcrossProcesses(fx)('a SIGKILLed leader is replaced within its lease, with a higher term', async () => {
      const WATCHDOG = 600;
      const worker = WorkerProcess.start('leader-worker.mjs', { ...fx.env(), ELECTION: 'elect:killed', WATCHDOG });
      const elected = await worker.waitForType('elected');
      await worker.waitForType('renewed');
      const client = await fx.client({ watchdogTimeout: WATCHDOG });
      const candidate = stand(client, 'elect:killed');
      const takeover = nextEvent<[Leadership]>(candidate, 'elected');
      await until(async () => (await fx.subscribers('lock:{leader:elect:killed}:released')) > 0, 'the candidate to wait');
      const killedAt = performance.now();
      worker.signal('SIGKILL');
      const [leadership] = await takeover;
      expect(performance.now() - killedAt).toBeLessThan(WATCHDOG + 1500);
      expect(leadership.term).toBeGreaterThan(elected.term as number);
      await candidate.resign();
    });
  });
}
