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
