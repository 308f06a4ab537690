import { useRedis } from '../harness/use-redis.js';

/**
 * A lock granted to a waiting process is held by a placeholder owner (`<client id>:grant`) until one
 * of that process's callers takes it over. A failover can bring a placeholder back whose take-over the
 * promoted replica never saw, with a token that caller already used (and a fenced resource already
 * accepted): taking it over again must not hand out that token a second time.
 */
describe('taking over a grant draws a new fencing token', () => {
  const redis = useRedis();

  it("a placeholder brought back with a used token is taken over with a higher one, not the placeholder's", async () => {
    const client = await redis.client({ clientId: 'takeover-process' });
    const first = await client.lock('takeover:a', '30s');
    const used = first.token as number;
    await first.unlock();
    // The state a promoted replica may hold: the grant to this process, with the token it then used.
    const admin = redis.server().client();
    await admin.hset('lock:{takeover:a}', 'owner', 'takeover-process:grant', 'holds', 1, 'token', used, 'renew', 0);
    await admin.pexpire('lock:{takeover:a}', 30_000);
    const second = await client.lock('takeover:a', { leaseTime: '30s', waitTime: '5s' });
    expect(await admin.hget('lock:{takeover:a}', 'owner')).not.toBe('takeover-process:grant'); // taken over, not waited out
    expect(second.token).toBeGreaterThan(used);
    await second.unlock();
  });
});
