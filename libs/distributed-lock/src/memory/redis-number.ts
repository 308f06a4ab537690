/**
 * Numbers as Redis 7.0 writes and reads them, for the in-memory store.
 *
 * Redis 7.0 turns a Lua number passed to `redis.call` into a string with C's `%.17g`, and writes a
 * sorted set's score the same way (ZSCORE, ZRANGE WITHSCORES). Every integer below 2^53 keeps all its
 * digits (a fencing token around 1.8e15 is stored exactly); 0.1 becomes "0.10000000000000001".
 * (Redis 7.2 switched both to the shortest round-trip form, "0.1": the two agree on integers, the only
 * numbers the library's scripts pass.)
 */
export function formatDouble(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Object.is(value, -0)) return '-0';
  if (Number.isSafeInteger(value)) return String(value);
  // %.17g: 17 significant digits, exponent form when the exponent is below -4 or at least 17, and
  // trailing zeros (and a trailing point) dropped.
  const [mantissa, exponentText] = value.toExponential(16).split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 17) {
    const digits = stripZeros(mantissa);
    return `${digits}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return stripZeros(value.toFixed(16 - exponent));
}

function stripZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}

/** A command's integer argument, as strictly as Redis parses it (no spaces, signs or decimals). */
export function parseInteger(text: string): number {
  if (!/^(0|-?[1-9][0-9]*)$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new Error('ERR value is not an integer or out of range');
  }
  return Number(text);
}

/** A score argument (ZADD): a decimal or exponent number, or `inf` / `+inf` / `-inf`. */
export function parseScore(text: string): number {
  const lower = text.toLowerCase();
  if (lower === 'inf' || lower === '+inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  const value = /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[-+]?[0-9]+)?$/i.test(text) ? Number(text) : NaN;
  if (Number.isNaN(value)) throw new Error('ERR value is not a valid float');
  return value;
}
