import type { INestApplication } from '@nestjs/common';
import { LockService, type LockClient } from 'nestjs-distributed-lock';
import { DistributedLockBoardEvents, type BoardForceUnlockEvent, type BoardSnapshot } from 'nestjs-distributed-lock/board';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent, until } from '../harness/wait.js';
import { BoardKeyGuard, startBoardApp, type Platform } from './board-app.js';

const KEY = { 'x-board-key': BoardKeyGuard.KEY };

async function get(url: string, headers: Record<string, string> = KEY): Promise<{ status: number; type: string; text: string; csp: string | null }> {
  const response = await fetch(url, { headers });
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    text: await response.text(),
    csp: response.headers.get('content-security-policy'),
  };
}

describe.each(['express', 'fastify'] as Platform[])('the lock board on %s', (platform) => {
  const redis = useRedis();
  let app: INestApplication | undefined;
  let url: string;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const start = async (options: Parameters<typeof startBoardApp>[2]): Promise<LockService> => {
    ({ app, url } = await startBoardApp(platform, { host: redis.server().host, port: redis.server().port }, options));
    return app.get(LockService);
  };

  it('shows held locks, their holders and waiters in order as inspect() has them; filters, pages, serves its own assets; behind the guard', async () => {
    const locks = await start({ path: '/locks', guards: [BoardKeyGuard], pageSize: 2 });
    const other: LockClient = await redis.client({ instanceName: 'other-process' });
    const held = await Promise.all(['board:a', 'board:b', 'board:c'].map((name) => other.lock(name, '20s')));
    const waiting = locks.runInNewContext(() => locks.lock('board:a', { waitTime: '10s' }));
    await until(async () => (await locks.inspect('board:a')).waiting.length === 1, 'this app to wait for board:a');

    for (const path of ['/locks', '/locks/live', '/locks/data', '/locks/board.js', '/locks/board.css', '/locks/force-unlock']) {
      expect([path, (await get(`${url}${path}`, {})).status]).toEqual([path, 403]);
    }
    const page = await get(`${url}/locks?filter=board:*`);
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.csp).toContain("default-src 'none'");
    expect(page.text).toContain('<script src="/locks/board.js" defer></script>');
    expect(page.text).not.toMatch(/https?:\/\//); // nothing from elsewhere
    const a = await locks.inspect('board:a');
    expect(page.text).toContain(`data-lock="board:a" data-kind="reentrant"`);
    expect(page.text).toContain(`data-token="${a.holder!.token}"`);
    expect(page.text).toContain(a.holder!.instance.label);
    expect(page.text).toMatch(/page 1 of 2/);
    // The circuit breaker of each Redis node, as this process sees it.
    expect(page.text).toMatch(new RegExp(`<tr data-node="${locks.target}"><th scope="row">${locks.target}</th><td>closed</td><td class="num">0</td>`));

    const data = JSON.parse((await get(`${url}/locks/data?filter=board:*`)).text) as BoardSnapshot;
    expect(data.locks).toMatchObject({ total: 3, pages: 2, page: 1 });
    expect(data.locks.rows.map((row) => [row.name, row.holders[0]!.token, row.holders[0]!.process])).toEqual([
      ['board:a', held[0]!.token, a.holder!.instance.label],
      ['board:b', held[1]!.token, a.holder!.instance.label],
    ]);
    const waiter = data.locks.rows[0]!.waiters[0]!;
    expect(waiter).toMatchObject({ position: 1, process: a.waiting[0]!.instance.label, self: true, callers: 1, timing: 'exact' });
    expect(data.instances.map((instance) => instance.instanceName).sort()).toEqual(['board-app', 'other-process']);
    expect(data.circuits).toEqual([expect.objectContaining({ node: locks.target, state: 'closed', failures: 0 })]);
    const second = JSON.parse((await get(`${url}/locks/data?filter=board&page=2`)).text) as BoardSnapshot;
    expect(second.locks.rows.map((row) => row.name)).toEqual(['board:c']);
    expect((JSON.parse((await get(`${url}/locks/data?filter={x}`)).text) as BoardSnapshot).error).toMatch(/cannot contain/);
    expect((await get(`${url}/locks/live?filter=board:b`)).text).toMatch(/^<section id="locks">[\s\S]*board:b[\s\S]*<\/section>/);
    expect((await get(`${url}/locks/board.js`)).type).toMatch(/^text\/javascript/);
    expect((await get(`${url}/locks/board.css`)).type).toMatch(/^text\/css/);

    await held[0]!.unlock();
    await (await waiting).unlock();
    await Promise.all(held.slice(1).map((handle) => handle.unlock()));
    // The statistics come from this app's own events: its one acquisition of board:a, after a wait.
    await until(async () => {
      const stats = (JSON.parse((await get(`${url}/locks/data?filter=board:a`)).text) as BoardSnapshot).stats;
      return stats.length === 1 && stats[0]!.acquired === 1 && stats[0]!.hold.count === 1;
    }, 'the statistics of board:a');
  });

  it('is read-only by default: no force-unlock link, and the routes refuse', async () => {
    await start({});
    const other = await redis.client();
    const handle = await other.lock('board:ro', '20s');
    const page = await get(`${url}/locks`);
    expect(page.text).toContain('data-lock="board:ro"');
    expect(page.text).not.toContain('force-unlock');
    expect((await get(`${url}/locks/force-unlock?name=board:ro&kind=reentrant`)).status).toBe(403);
    expect((await fetch(`${url}/locks/force-unlock?name=board:ro&kind=reentrant&tokens=${handle.token}`, { method: 'POST' })).status).toBe(403);
    expect(await other.isLocked('board:ro')).toBe(true);
    await handle.unlock();
  });

  it('force-unlock, when enabled: a confirmation naming the token, refused without it or once the lock changed hands, logged as an event', async () => {
    const locks = await start({ path: 'admin/locks', forceUnlock: true });
    const other = await redis.client({ instanceName: 'holder' });
    const handle = await other.lock('board:stuck', '20s');
    const page = await get(`${url}/admin/locks`);
    expect(page.text).toContain('href="/admin/locks/force-unlock?name=board%3Astuck&amp;kind=reentrant"');
    const confirm = await get(`${url}/admin/locks/force-unlock?name=board:stuck&kind=reentrant`);
    expect(confirm.text).toContain(`<strong id="tokens">${handle.token}</strong>`);
    const action = /<form method="post" action="([^"]+)"/.exec(confirm.text)![1]!.replace(/&amp;/g, '&');
    expect(action).toContain(`tokens=${handle.token}`);

    const forged = await fetch(`${url}${action.replace(/key=[0-9a-f]+/, 'key=0')}`, { method: 'POST' });
    expect(forged.status).toBe(403);
    const stale = await fetch(`${url}${action.replace(`tokens=${handle.token}`, 'tokens=1')}`, { method: 'POST' });
    expect(stale.status).toBe(409);
    expect(await other.isLocked('board:stuck')).toBe(true);

    const audited = nextEvent<[BoardForceUnlockEvent]>(app!.get(DistributedLockBoardEvents), 'force-unlock');
    const done = await fetch(`${url}${action}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'confirm=yes\r\n' });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('data-outcome="removed"');
    const [event] = await audited;
    expect(event).toMatchObject({ name: 'board:stuck', kind: 'reentrant', tokens: [handle.token], holders: [expect.stringMatching(/^holder@/)] });
    expect(await locks.isLocked('board:stuck')).toBe(false);
    expect((await get(`${url}/admin/locks/force-unlock?name=board:s&kind=semaphore`)).status).toBe(400);
    await handle.unlock().catch(() => undefined); // it was removed: the holder learns it here
  });
});
