import { redisGlob } from './redis-glob.js';

/** Names stored in a redis-server 7.0.15, then matched there with `KEYS <pattern>`. */
const NAMES = ['a', 'b', 'z', 'm', '-', '^', '\\', '[', ']', 'x]', '[abc', 'ab', 'a.b', 'a.b*', 'axb'];
const SINGLE = NAMES.filter((name) => name.length === 1);

/** What that server answered, per pattern (the edge cases of the lock board's filter and of the in-memory store's SCAN). */
const REDIS_ANSWERS: [pattern: string, matched: string[]][] = [
  ['*', NAMES],
  ['?', SINGLE],
  ['a.b', ['a.b']], // `.` is itself
  ['a.b\\*', ['a.b*']], // an escaped `*`
  ['\\[abc', ['[abc']],
  ['x]', ['x]']], // a `]` outside a set is itself
  ['[a-c]', ['a', 'b']],
  ['[z-a]', ['a', 'b', 'm', 'z']], // reversed ends are swapped
  ['[^a]', SINGLE.filter((name) => name !== 'a')],
  ['[\\]]', [']']],
  ['[\\\\]', ['\\']],
  ['[a\\-c]', ['a', '-']], // an escaped `-` is no range
  ['[-a]', ['a', '-']],
  ['[abc', ['a', 'b']], // no closing bracket: the set runs to the end of the pattern
  ['[', []],
  ['[]', []], // an empty set matches nothing
  ['[]]', []],
  ['[^]', SINGLE], // a negated empty set matches any one character
];

describe('redisGlob', () => {
  it.each(REDIS_ANSWERS)('%s matches what Redis matched', (pattern, matched) => {
    const glob = redisGlob(pattern);
    expect(NAMES.filter((name) => glob.test(name)).sort()).toEqual([...matched].sort());
  });

  it('matches whole names, across any characters (the lock board filter’s patterns)', () => {
    expect(redisGlob('product:*').test('product:42')).toBe(true);
    expect(redisGlob('product:?2').test('product:42')).toBe(true);
    expect(redisGlob('product:?2').test('product:420')).toBe(false);
    expect(redisGlob('order:[ab]').test('order:c')).toBe(false);
    expect(redisGlob('*restock*').test('line\nrestock\n')).toBe(true);
    expect(redisGlob('a(b)|c+').test('a(b)|c+')).toBe(true); // regular-expression syntax is plain text
    expect(redisGlob('trailing\\').test('trailing\\')).toBe(true); // a trailing backslash is itself
  });
});
