// A counter protected by fencing tokens, kept in its own Redis (never the lock's), on the library's
// fenced-write helper (FencedResource): the resource's own check, with no Lua of its own. Plain
// JavaScript so that worker processes (test/workers/*.mjs, on the built package) and in-process tests
// (on the sources) share one implementation.
//
// Every read and write carries the lock's token; the resource refuses a token lower than the highest
// it has seen, and reads record their token too, so a holder that read before a newer holder cannot
// write afterwards. Each accepted write appends its token to a log in the same fenced step, so a test
// can check afterwards that the accepted writes came in token order and that none was lost.
import { FencedResource, StaleTokenError } from 'nestjs-distributed-lock';

export class FencedCounter {
  /** `redis`: an ioredis client of the resource's Redis. */
  constructor(redis, key = 'fenced:counter') {
    this.redis = redis;
    this.key = key;
    this.resource = new FencedResource(redis, `${key}:token`);
  }

  /** Reads the counter with `token` (recorded as seen): { accepted: true, value } or { accepted: false, highestSeen }. */
  read(token) {
    return this.fenced(async () => Number((await this.resource.get(token, this.key)) ?? '0'));
  }

  /** Writes `value` with `token`, unless a higher token was seen. */
  write(token, value) {
    return this.fenced(async () => {
      await this.resource.batch(token).set(this.key, value).rpush(`${this.key}:log`, token).exec();
      return value;
    });
  }

  /** The highest token the resource has seen (0 when none). */
  async highestSeen() {
    return (await this.resource.highestSeen()) ?? 0;
  }

  /** The current value, and the tokens of every accepted write in the order they were applied. */
  async history() {
    const [value, log] = await Promise.all([this.redis.get(this.key), this.redis.lrange(`${this.key}:log`, 0, -1)]);
    return { value: Number(value ?? '0'), tokens: log.map(Number) };
  }

  async fenced(call) {
    try {
      return { accepted: true, value: await call() };
    } catch (error) {
      if (error instanceof StaleTokenError) return { accepted: false, highestSeen: error.highestSeen };
      throw error;
    }
  }
}
