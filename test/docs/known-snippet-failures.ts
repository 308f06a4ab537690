/**
 * README.md's TypeScript that does not compile today, each named with why. The documentation site
 * (docs/) has no entry here and must never get one: a page whose snippet fails is fixed, or the
 * snippet is marked `<!-- not-compiled: reason -->` when it is illustrative.
 *
 * Empty since the README became a quick start (its TypeScript all compiles). An entry whose snippet
 * compiles again, or is gone from the README, fails the check too (delete the entry then), so the
 * list never hides anything.
 */
export interface KnownFailure {
  kind: 'fenced' | 'inline';
  /** A piece of the snippet's text that identifies it (an inline span: its whole text). */
  snippet: string;
  /** What fails, and why. */
  why: string;
}

export const KNOWN_README_FAILURES: KnownFailure[] = [];
