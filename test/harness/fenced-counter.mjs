// A counter protected by fencing tokens, kept in its own Redis (never the lock's). Plain JavaScript so
// that worker processes (test/workers/*.mjs) and in-process tests share one implementation.
//
// Every read and write carries the lock's token. The resource remembers the highest token it has seen
// and refuses anything lower; reads record their token too, so a holder that read before a newer
// holder cannot write afterwards (a write-only check would let the two interleave: read, read, write,
// write). Each accepted write appends its token to a log, so a test can check afterwards that the
// accepted writes came in token order and that none was lost.

const FENCED_LUA = `
local seen = tonumber(redis.call('get', KEYS[2]) or '0')
local token = tonumber(ARGV[1])
if token < seen then
  return {0, seen}
end
if token > seen then
  redis.call('set', KEYS[2], ARGV[1])
end
if ARGV[2] == 'set' then
  redis.call('set', KEYS[1], ARGV[3])
  redis.call('rpush', KEYS[3], ARGV[1])
end
return {1, tonumber(redis.call('get', KEYS[1]) or '0')}
`;

export class FencedCounter {
  /** `redis`: an ioredis client of the resource's Redis. */
  constructor(redis, key = 'fenced:counter') {
    this.redis = redis;
    this.key = key;
  }

  /** Reads the counter with `token` (recorded as seen): { accepted: true, value } or { accepted: false, highestSeen }. */
  read(token) {
    return this.run(token, 'get', '');
  }

  /** Writes `value` with `token`, unless a higher token was seen. */
  write(token, value) {
    return this.run(token, 'set', String(value));
  }

  /** The highest token the resource has seen (0 when none). */
  async highestSeen() {
    return Number((await this.redis.get(`${this.key}:token`)) ?? '0');
  }

  /** The current value, and the tokens of every accepted write in the order they were applied. */
  async history() {
    const [value, log] = await Promise.all([this.redis.get(this.key), this.redis.lrange(`${this.key}:log`, 0, -1)]);
    return { value: Number(value ?? '0'), tokens: log.map(Number) };
  }

  async run(token, op, value) {
    const [ok, number] = await this.redis.eval(FENCED_LUA, 3, this.key, `${this.key}:token`, `${this.key}:log`, String(token), op, value);
    return ok === 1 ? { accepted: true, value: number } : { accepted: false, highestSeen: number };
  }
}
