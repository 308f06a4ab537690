/** What a benchmark run started and must stop when it is interrupted. */
export interface Stoppable {
  /** Stops workers, apps and the redis-server gracefully. */
  stop(): Promise<void>;
  /** At process exit: kills whatever is still running, synchronously. */
  killNow(): void;
}

/**
 * Ctrl-C or SIGTERM stops everything `run` started (once, however many signals come) and exits 130;
 * a process that exits any other way kills what is left. Returns the function that takes the signal
 * handlers off again, for when the run has ended (another run may follow in the same process).
 */
export function stopOnInterrupt(run: Stoppable, what: string): () => void {
  let interrupted = false;
  const onSignal = (): void => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\ninterrupted: stopping everything ${what} started`);
    void run.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', () => run.killNow());
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
}

/**
 * The end of a run: prints its report and where the files went, and the failures if any; the exit
 * code (1 when our library or the baseline failed a check, else 0).
 */
export function concludeRun(consoleText: string, files: string[], failures: string[]): number {
  console.log(`\n${consoleText}`);
  console.log(`\nresults: ${files.join(', ')}`);
  if (failures.length === 0) return 0;
  console.error(`\nFAILED: ${failures.join('; ')}`);
  return 1;
}
