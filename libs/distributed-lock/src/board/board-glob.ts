/** The most characters of a filter typed into the page. */
export const MAX_FILTER_LENGTH = 200;

/**
 * The SCAN pattern for what was typed into the filter: a glob as it is (`product:*`, `order:?2`),
 * plain text as a substring (`restock` -> `*restock*`), nothing as everything. Undefined when it
 * cannot be one (braces: they would change the Redis hash tag of the keys).
 */
export function scanPatternOf(filter: string | undefined): string | undefined {
  const text = (filter ?? '').trim().slice(0, MAX_FILTER_LENGTH);
  if (/[{}]/.test(text)) return undefined;
  if (text === '') return '*';
  return /[*?[]/.test(text) ? text : `*${text.replace(/\\/g, '\\\\')}*`;
}

/** A Redis glob (`*`, `?`, `[...]`, backslash escapes) as a regular expression over whole names. */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '\\' && i + 1 < glob.length) source += escapeRegExp(glob[++i]!);
    else if (char === '*') source += '[\\s\\S]*';
    else if (char === '?') source += '[\\s\\S]';
    else if (char === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) source += '\\[';
      else {
        const body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
        source += body.startsWith('^') ? `[^${body.slice(1)}]` : `[${body}]`;
        i = close;
      }
    } else source += escapeRegExp(char);
  }
  return new RegExp(`^${source}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
