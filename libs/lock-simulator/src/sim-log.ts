import type { Scheduler } from './scheduler.js';

/** How many of the last lines a run keeps for its failure report when it does not keep them all. */
const TAIL_LINES = 400;

/**
 * The story of one run: who sent what, when it ran, what arrived, which fault struck, what each caller
 * got, one line each, in virtual time. Every line feeds a hash of the whole run: the same seed must
 * give the same hash (any hidden source of nondeterminism, a stray Math.random, a real timer, an
 * unordered walk, breaks it). Owner ids are written by order of first appearance (`p2:o5`): the
 * library numbers lock contexts process-wide, so raw numbers differ between runs in one worker.
 */
export class SimLog {
  private hashValue = 0x811c9dc5;
  private readonly owners = new Map<string, string>();
  private readonly tail: string[] = [];
  readonly lines: string[] | undefined;
  count = 0;

  constructor(
    private readonly scheduler: Scheduler,
    keepAll: boolean,
  ) {
    this.lines = keepAll ? [] : undefined;
  }

  line(who: string, what: string): void {
    const text = `${this.scheduler.now.toFixed(3).padStart(10)} ${who.padEnd(6)} ${this.normalize(what)}`;
    let hash = this.hashValue;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193);
    }
    this.hashValue = hash >>> 0;
    this.count++;
    if (this.lines) this.lines.push(text);
    else {
      this.tail.push(text);
      if (this.tail.length > TAIL_LINES) this.tail.shift();
    }
  }

  /** The hash of every line so far (hex). */
  get hash(): string {
    return this.hashValue.toString(16).padStart(8, '0');
  }

  /** The lines kept: all of them, or the last ones. */
  story(): string[] {
    return this.lines ?? [...this.tail];
  }

  /** `p2:1234` (client id `p2`, the library's context number) -> `p2:o5`, numbered in this run. */
  normalize(text: string): string {
    return text.replace(/\b(p\d+):(\d+)\b/g, (whole) => {
      let name = this.owners.get(whole);
      if (!name) {
        name = `${whole.slice(0, whole.indexOf(':'))}:o${this.owners.size}`;
        this.owners.set(whole, name);
      }
      return name;
    });
  }
}
