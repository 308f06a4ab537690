/**
 * What a user's first minutes with a client try, on two lock clients that `connect` makes (two
 * processes, as far as the locks can tell): the second is kept out while the first holds the lock,
 * waits (subscribed to its unlock channel) and gets it when the first releases it, with a higher
 * fencing token; then both close. The caller's process must then end by itself: a socket or timer
 * left open would keep it alive. Returns what it saw; prints nothing.
 */
export async function checkLocks(connect, name = 'pkg:check') {
  const a = await connect();
  const b = await connect();
  const first = await a.lock(name); // watchdog lease: 30 s
  const excluded = (await b.tryLock(name)) === false;
  const subscribed = new Promise((resolve) => {
    b.events.on('subscription', (event) => {
      if (event.subscribed) resolve(event.channel);
    });
  });
  const waiting = b.tryLock(name, '20s');
  const channel = await subscribed;
  await first.unlock();
  const second = await waiting;
  const result = {
    excluded,
    channel,
    acquiredAfterRelease: second !== false,
    tokensIncrease: second !== false && second.token > first.token,
    mode: a.mode,
  };
  if (second) await second.unlock();
  await a.close();
  await b.close();
  return result;
}
