/**
 * A Redis glob pattern (SCAN MATCH, KEYS) as a regular expression over whole names, read the way Redis
 * reads it (stringmatchlen in its util.c): `*` any run of characters, `?` one character, `\x` the
 * character x itself (a trailing `\` is itself), and `[...]` one character of a set, where `^` first
 * negates it, `a-z` is a range (reversed ends are swapped), `\x` inside is x, and the set runs to the
 * first `]` not escaped, or to the end of the pattern when there is none. An empty set `[]` matches
 * nothing, `[^]` any one character. Everything else matches itself. The in-memory store's SCAN and the
 * lock board's filter both use it.
 */
export function redisGlob(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else if (char === '\\' && i + 1 < pattern.length) source += escape(pattern[++i]!);
    else if (char === '[') {
      const set = readSet(pattern, i + 1);
      source += set.source;
      i = set.end;
    } else source += escape(char);
  }
  return new RegExp(`^${source}$`);
}

/** The set that starts at `start` (after its `[`): its regular expression, and the index of its last character. */
function readSet(pattern: string, start: number): { source: string; end: number } {
  let i = start;
  const negated = pattern[i] === '^';
  if (negated) i++;
  let members = '';
  for (;;) {
    if (pattern[i] === '\\' && i + 1 < pattern.length) {
      members += escapeInSet(pattern[i + 1]!);
      i += 2;
    } else if (pattern[i] === ']') {
      break;
    } else if (i >= pattern.length) {
      i = pattern.length - 1; // no closing bracket: the set is the rest of the pattern
      break;
    } else if (i + 2 < pattern.length && pattern[i + 1] === '-') {
      const [low, high] = [pattern[i]!, pattern[i + 2]!].sort();
      members += `${escapeInSet(low!)}-${escapeInSet(high!)}`;
      i += 3;
    } else {
      members += escapeInSet(pattern[i]!);
      i++;
    }
  }
  if (members === '') return { source: negated ? '[\\s\\S]' : '(?!)', end: i };
  return { source: `[${negated ? '^' : ''}${members}]`, end: i };
}

function escape(char: string): string {
  return char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function escapeInSet(char: string): string {
  return /[\]\\^[-]/.test(char) ? `\\${char}` : char;
}
