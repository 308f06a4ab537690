import type { EventEmitter } from 'node:events';

/** Resolves with the arguments of the next `event` that satisfies `match`; rejects after `timeoutMs`. */
export function nextEvent<T extends unknown[]>(
  emitter: EventEmitter,
  event: string,
  match: (...args: T) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const listener = (...args: unknown[]): void => {
      if (!match(...(args as T))) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args as T);
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`no "${event}" event within ${timeoutMs} ms`));
    }, timeoutMs);
    emitter.on(event, listener);
  });
}

/**
 * Re-checks `probe` after each macrotask turn until it returns true, for state that has no event of
 * its own (e.g. Redis-side counters); fails after `timeoutMs`.
 */
export async function until(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
