import type { Redis } from 'ioredis';

/**
 * A resource protected by fencing tokens, kept in its own Redis (never the lock's): every read and
 * write carries the lock's token; the resource remembers the highest token it has seen and refuses
 * anything lower. Reads record their token too, so a holder that read before a newer holder cannot
 * write afterwards (a write-only check would let the two interleave: read, read, write, write).
 */
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
end
return {1, tonumber(redis.call('get', KEYS[1]) or '0')}
`;

export type FencedReply = { accepted: true; value: number } | { accepted: false; highestSeen: number };

export class FencedCounter {
  constructor(
    private readonly redis: Redis,
    private readonly key = 'fenced:counter',
  ) {}

  /** Reads the counter with `token` (recorded as seen). */
  read(token: number): Promise<FencedReply> {
    return this.run(token, 'get');
  }

  /** Writes `value` with `token`, unless a higher token was seen. */
  write(token: number, value: number): Promise<FencedReply> {
    return this.run(token, 'set', String(value));
  }

  /** The highest token the resource has seen (0 when none). */
  async highestSeen(): Promise<number> {
    return Number((await this.redis.get(`${this.key}:token`)) ?? '0');
  }

  private async run(token: number, op: 'get' | 'set', value = ''): Promise<FencedReply> {
    const [ok, number] = (await this.redis.eval(FENCED_LUA, 2, this.key, `${this.key}:token`, String(token), op, value)) as [number, number];
    return ok === 1 ? { accepted: true, value: number } : { accepted: false, highestSeen: number };
  }
}
