import { Scheduler, type EventOwner } from './scheduler.js';

/**
 * The simulator's scheduler must keep Node's timer semantics, or it reports bugs the library does not
 * have: a timer cleared before its callback ran never runs, even when it fell due while its process
 * was paused and waits for the pause to end.
 */
describe("the simulator's scheduler", () => {
  it('a timer that fell due in a pause and is cleared when the pause ends does not run', async () => {
    const scheduler = new Scheduler();
    const process: EventOwner = { pausedUntil: 100, dead: false };
    const ran: string[] = [];
    // Due during the pause: it waits for the pause's end, behind what is queued for then.
    const sleep = scheduler.at(10, () => ran.push('stale timer'), process);
    // At the pause's end, a message wakes the process first, which clears that timer and sets another
    // (control: the scheduler once re-queued a copy of the timer, which a clear did not reach; its stale
    // callback then ended the next sleep, seed 12153).
    scheduler.at(
      100,
      () => {
        ran.push('woken');
        sleep.cancel();
        scheduler.after(50, () => ran.push('next timer'), process);
      },
      process,
    );
    await scheduler.runUntil(1_000);
    expect(ran).toEqual(['woken', 'next timer']);
  });

  it('after a pause, the timers that fell due in it run before the replies that arrived in it, whatever came first', async () => {
    const scheduler = new Scheduler();
    const process: EventOwner = { pausedUntil: 100, dead: false };
    const ran: string[] = [];
    // A reply arrives at 20 and the end of a section falls due at 60, both in the pause. Node, resumed,
    // runs its due timers first and reads its sockets after (control: in arrival order, the reply that
    // renewed a lease came first, and a section's end never saw its lease over).
    scheduler.at(20, () => ran.push('reply'), process, true);
    scheduler.at(60, () => ran.push('timer'), process);
    scheduler.at(120, () => ran.push('later timer'), process);
    await scheduler.runUntil(1_000);
    expect(ran).toEqual(['timer', 'reply', 'later timer']);
  });

  it("a paused process's timer runs once the pause ends, not before", async () => {
    const scheduler = new Scheduler();
    const process: EventOwner = { pausedUntil: 100, dead: false };
    const ranAt: number[] = [];
    scheduler.at(10, () => ranAt.push(scheduler.now), process);
    await scheduler.runUntil(1_000);
    expect(ranAt).toEqual([100]);
  });
});
