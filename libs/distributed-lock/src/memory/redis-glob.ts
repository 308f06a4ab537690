/**
 * Redis' glob patterns (SCAN MATCH, KEYS) as a regular expression: `*` any run of characters, `?` one
 * character, `[abc]`, `[a-z]` and `[^a]` one of (or none of) a set, `\x` the character x itself.
 * Everything else matches itself. An unclosed `[` matches itself, as in Redis.
 */
export function redisGlob(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    const close = char === '[' ? pattern.indexOf(']', i + 2) : -1;
    if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else if (char === '\\' && i + 1 < pattern.length) source += escape(pattern[++i]!);
    else if (close > i) {
      let set = pattern.slice(i + 1, close);
      const negated = set.startsWith('^');
      if (negated) set = set.slice(1);
      // Ranges stay ranges; an escaped character (`\-` too) and `]`, `\`, `^` are taken literally.
      const members = set.replace(/\\(.)|([\]\\^])/g, (_, escaped: string | undefined, special: string | undefined) =>
        escaped !== undefined ? escape(escaped) : `\\${special}`,
      );
      source += `[${negated ? '^' : ''}${members}]`;
      i = close;
    } else source += escape(char);
  }
  try {
    return new RegExp(`^${source}$`);
  } catch {
    throw new Error(`ERR the in-memory store cannot read the pattern ${JSON.stringify(pattern)} (a range out of order?)`);
  }
}

function escape(char: string): string {
  return char.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
