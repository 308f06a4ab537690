import { ManualClock } from '../../../testing/manual-clock.js';
import type { LockRuntime } from '../../engine/lock-runtime.js';
import { notExecuted } from '../../connection/not-executed.js';
import { OwnerOrder } from './owner-order.js';

const OPERATION_TIMEOUT_MS = 300;

/** An order on a ManualClock, and commands the test answers by hand. */
function setUp() {
  const clock = new ManualClock();
  const order = OwnerOrder.of({ clock, operationTimeoutMs: OPERATION_TIMEOUT_MS } as unknown as LockRuntime);
  const sent: string[] = [];
  const answers = new Map<string, (value: string) => void>();
  const command = (name: string) => () => {
    sent.push(name);
    return new Promise<string>((resolve) => answers.set(name, resolve));
  };
  return { clock, order, sent, answers, command };
}

describe('OwnerOrder: one owner’s commands to one RedLock master run in the order they were sent', () => {
  it('a command waits for the one before it, and goes once that one has answered', async () => {
    const { clock, order, sent, answers, command } = setUp();
    order.send('lock\nowner\n0', command('acquire'));
    const release = order.send('lock\nowner\n0', command('release'));
    await clock.advance(10);
    expect(sent).toEqual(['acquire']);
    answers.get('acquire')!('granted');
    await clock.advance(0);
    expect(sent).toEqual(['acquire', 'release']);
    answers.get('release')!('released');
    await expect(release.reply).resolves.toBe('released');
  });

  it('a command whose turn comes after its sender stopped waiting for it (`sendBy`) is not sent, and says it did not run', async () => {
    const { clock, order, sent, command } = setUp();
    // The first attempt's acquire hangs on a slow master; the next attempt's waits only 100 ms for it.
    order.send('lock\nowner\n0', command('first acquire'));
    const next = order.send('lock\nowner\n0', command('next acquire'), undefined, clock.now() + 100);
    const outcome = next.reply.catch((error: unknown) => error);
    await clock.advance(OPERATION_TIMEOUT_MS); // the first one's turn is over: it can no longer run
    expect(sent).toEqual(['first acquire']);
    const error = await outcome;
    expect(notExecuted(error)).toBe(true);
    await expect(next.done).resolves.toBeUndefined();
  });

  it('control: without `sendBy`, the command goes when its turn comes, however late', async () => {
    const { clock, order, sent, command } = setUp();
    order.send('lock\nowner\n0', command('first acquire'));
    order.send('lock\nowner\n0', command('release'));
    await clock.advance(OPERATION_TIMEOUT_MS);
    expect(sent).toEqual(['first acquire', 'release']);
  });
});
