// One clock for comparing times taken in different processes on this machine: CLOCK_MONOTONIC, which
// process.hrtime reads and every process shares. `performance.timeOrigin + performance.now()` is not
// one: each process fixes its timeOrigin from the wall clock when it starts, and about 2 % of processes
// started in a burst on a loaded machine fixed it 8-34 ms ahead of the others, which made sections that
// followed each other look overlapping.

/** Milliseconds (microsecond resolution) on the machine's monotonic clock, comparable across its processes. */
export function sharedNow() {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}
