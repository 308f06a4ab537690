/** Metrics of one run of one scenario for one library, by name (cyclesPerSec, p50Ms, ...). */
export type Metrics = Record<string, number>;

/** The first error a run met, and how many there were. */
export interface RunErrors {
  errors: number;
  firstError?: string;
}

export interface RunOutcome {
  metrics: Metrics;
  errors: RunErrors;
}

export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Counts errors and keeps the first message. */
export class ErrorTally implements RunErrors {
  errors = 0;
  firstError: string | undefined;

  record(error: unknown): void {
    this.errors += 1;
    this.firstError ??= describeError(error);
  }

  toJSON(): RunErrors {
    return this.firstError === undefined ? { errors: this.errors } : { errors: this.errors, firstError: this.firstError };
  }
}
