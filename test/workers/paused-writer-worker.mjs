// A holder that keeps checking its lock before each "write", for reliability scenario 20: what does a
// process resumed after a pause longer than its lease see before its next write?
// env: DISTRIBUTED_LOCK_REDIS_* (any mode), LOCK_NAME, LEASE (ms, an explicit lease: a fixed deadline)
// Prints {"type":"acquired","token"}; then, after the test pauses and resumes the process:
//   {"type":"resumed-tick", ...}  the first 10 ms tick after a gap longer than half the lease: the pause
//                                 (a timer due before the lease deadline, so it may run before the
//                                 deadline timer). Not the whole lease: the pause lasts from the test's
//                                 SIGSTOP, a moment after the acquisition, to another process's
//                                 acquisition once the lease ran out in Redis, so about a lease, and
//                                 a little less when the SIGSTOP came late.
//   {"type":"late-timer", ...}    a timer due 100 ms after the lease deadline
// Each carries what the code saw at that moment: isHeld, the signal captured at acquisition
// (aborted?), and what throwIfLost() threw.
import { LockClient } from './core.mjs';

const send = (message) => console.log(JSON.stringify(message));
const client = await LockClient.connect({});
const lease = Number(process.env.LEASE);
const handle = await client.lock(process.env.LOCK_NAME, lease);
const signal = handle.signal; // captured once, as code that passes it down would
const acquiredAt = performance.now();

const observe = () => {
  let threw = null;
  try {
    handle.throwIfLost();
  } catch (error) {
    threw = error.code;
  }
  return { signalAborted: signal.aborted, isHeld: handle.isHeld, threw, sinceAcquiredMs: Math.round(performance.now() - acquiredAt) };
};

let last = performance.now();
const ticker = setInterval(() => {
  const now = performance.now();
  const gap = now - last;
  last = now;
  if (gap > lease / 2) {
    clearInterval(ticker);
    send({ type: 'resumed-tick', gapMs: Math.round(gap), ...observe() });
  }
}, 10);
setTimeout(() => send({ type: 'late-timer', ...observe() }), lease + 100);
send({ type: 'acquired', token: handle.token });

process.stdin.on('data', async (chunk) => {
  if (String(chunk).includes('exit')) {
    clearInterval(ticker);
    await client.close();
    process.exit(0);
  }
});
