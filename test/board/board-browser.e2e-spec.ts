import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { LockClient, type InspectedLockKind, type LockInspection } from 'nestjs-distributed-lock';
import { startSingle, type Topology } from 'redis-topology';
import { startApp, stopApp, type InventoryApp } from '../harness/inventory-app.js';
import { until } from '../harness/wait.js';
import { stopAllWorkers, WorkerProcess } from '../harness/worker-process.js';

/** Debian's chromium (npm run setup installs it), or CHROMIUM_PATH; never a browser downloaded at test time. */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** Flags that work as root on a machine without network (Playwright adds --headless and a fresh --user-data-dir of its own). */
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
/** Where the screenshot goes when UPDATE_DOCS_SCREENSHOT=1 (the docs page shows it). */
const DOCS_SCREENSHOT = fileURLToPath(new URL('../../docs/public/board/lock-board.png', import.meta.url));
const LEADERSHIP = 'leader:inventory:restock-worker';

/** What the page shows of one lock: its holders' tokens and processes, its waiters' processes in order, its kind cell. */
async function shownLock(page: Page, name: string): Promise<{ tokens: number[]; holders: string[]; waiters: string[]; kind: string } | undefined> {
  const group = page.locator(`tbody[data-lock="${name}"]`);
  if ((await group.count()) === 0) return undefined;
  const attributes = async (selector: string, attribute: string): Promise<string[]> =>
    Promise.all((await group.locator(selector).all()).map(async (element) => (await element.getAttribute(attribute)) ?? ''));
  return {
    tokens: (await attributes('td.token', 'data-token')).map(Number),
    holders: await group.locator('td.holder').allTextContents(),
    waiters: await attributes('li[data-process]', 'data-process'),
    kind: (await group.locator('td').first().textContent()) ?? '',
  };
}

function expectShown(shown: Awaited<ReturnType<typeof shownLock>>, inspection: LockInspection): void {
  const holders = [inspection.holder, ...inspection.readers, ...inspection.permitHolders].filter((holder) => holder !== undefined);
  expect(shown).toBeDefined();
  expect(shown!.tokens).toEqual(holders.map((holder) => holder.token));
  holders.forEach((holder, i) => expect(shown!.holders[i]).toContain(holder.instance.label));
  expect(shown!.waiters).toEqual(inspection.waiting.map((waiter) => waiter.instance.label));
}

const skip = existsSync(CHROMIUM)
  ? undefined
  : `no browser at ${CHROMIUM} (npm run setup installs Debian's chromium package where apt-get works; or set CHROMIUM_PATH)`;
if (skip) console.warn(`the lock board in a real browser: skipped, ${skip}`);

(skip ? describe.skip : describe)('the lock board in a real browser (headless Chromium), against the demo app with locks in two other processes', () => {
  let topology: Topology;
  let app: InventoryApp;
  let browser: Browser;
  let client: LockClient;
  let a: WorkerProcess;
  let b: WorkerProcess;
  const inspect = (name: string, kind?: InspectedLockKind): Promise<LockInspection> => client.inspect(name, kind);

  beforeAll(async () => {
    topology = await startSingle();
    const env = { ...topology.env };
    [app, browser] = await Promise.all([
      startApp('app-1', { ...env, INVENTORY_RESTOCK_WORKER: 'true', INVENTORY_RESTOCK_WORKER_INTERVAL: '3600000', LOCK_BOARD_FORCE_UNLOCK: 'true' }),
      chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true }),
    ]);
    client = await LockClient.connect({ env });
    a = WorkerProcess.start('board-worker.mjs', { ...env, DISTRIBUTED_LOCK_INSTANCE_NAME: 'worker-a' });
    b = WorkerProcess.start('board-worker.mjs', { ...env, DISTRIBUTED_LOCK_INSTANCE_NAME: 'worker-b' });
    await Promise.all([a.waitForType('ready'), b.waitForType('ready')]);
    // Worker a holds one lock of each kind; worker b waits for each of them (and stands for the app's leadership).
    for (const command of ['hold plain order:1', 'hold fair report:daily', 'read catalog', 'permits pool 3 2']) a.send(command);
    await a.waitFor((message) => message.type === 'held' && message.name === 'pool', 'the permits');
    for (const command of ['wait plain order:1', 'wait fair report:daily', 'read catalog', 'wait permits pool 3 2', 'elect inventory:restock-worker'])
      b.send(command);
    await until(async () => {
      const [order, report, catalog, pool, leader] = await Promise.all([
        inspect('order:1'),
        inspect('report:daily', 'fair'),
        inspect('catalog', 'read-write'),
        inspect('pool', 'semaphore'),
        inspect(LEADERSHIP),
      ]);
      const all = [order, report, catalog, pool, leader];
      const labelled = all.every((lock) =>
        [lock.holder, ...lock.readers, ...lock.permitHolders, ...lock.waiting].every((who) => !who?.instance.label.startsWith('client ')),
      );
      return (
        labelled &&
        order.waiting.length === 1 &&
        report.waiting.length === 1 &&
        catalog.readers.length === 2 &&
        pool.waiting.length === 1 &&
        leader.waiting.length === 1
      );
    }, 'the locks held by worker a, and worker b waiting for each');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const worker of [a, b]) worker?.send('exit');
    await Promise.all([a, b].map((worker) => worker?.exited));
    await stopAllWorkers();
    await client?.close();
    if (app) await stopApp(app);
    await topology?.stop();
  }, 30_000);

  it('shows every holder and waiter as inspect() has them, live (no reload), with nothing fetched from elsewhere; a screenshot for the docs', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`${app.url}/locks`);
    await page.waitForSelector('#status.live'); // the script runs
    for (const [name, kind] of [
      ['order:1', 'reentrant'],
      ['report:daily', 'fair'],
      ['catalog', 'read-write'],
      ['pool', 'semaphore'],
      [LEADERSHIP, 'reentrant'],
    ] as const) {
      expectShown(await shownLock(page, name), await inspect(name, kind));
    }
    expect((await shownLock(page, 'pool'))!.kind).toBe('semaphore 2/3');
    const leader = await inspect(LEADERSHIP);
    const leaderRow = await page.textContent(`tr[data-leadership="${LEADERSHIP}"]`);
    expect(leaderRow).toContain(leader.holder!.instance.label);
    expect(leaderRow).toContain(String(leader.holder!.token));
    const instances = await Promise.all((await page.locator('tr[data-instance]').all()).map((row) => row.getAttribute('data-instance')));
    for (const name of ['app-1', 'worker-a', 'worker-b']) expect(instances.some((label) => label?.startsWith(`${name}@`))).toBe(true);

    // Two seconds on, the page has refreshed by itself and counts the waits up (each ≥ 2 s: they were there at its first look).
    const waited = async (): Promise<number[]> =>
      Promise.all((await page.locator('li[data-waited-ms]').all()).map(async (item) => Number(await item.getAttribute('data-waited-ms'))));
    await until(async () => (await waited()).every((ms) => ms >= 2000), 'the waits to count up to 2 s', 10_000);
    const screenshot = join(mkdtempSync(join(tmpdir(), 'lock-board-')), 'lock-board.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe('PNG');
    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') {
      mkdirSync(join(DOCS_SCREENSHOT, '..'), { recursive: true });
      copyFileSync(screenshot, DOCS_SCREENSHOT);
    }
    rmSync(join(screenshot, '..'), { recursive: true, force: true });

    // Live: worker a lets order:1 go, worker b gets it, and the open page shows the new holder by itself.
    a.send('release order:1');
    await b.waitFor((message) => message.type === 'held' && message.name === 'order:1', 'order:1 for worker b');
    const handedOver = await inspect('order:1');
    const shownToken = async (): Promise<number> => Number(await page.locator('tbody[data-lock="order:1"] td.token').first().getAttribute('data-token'));
    await until(async () => (await shownToken()) === handedOver.holder!.token, 'the page to show the new holder by itself', 10_000);
    expectShown(await shownLock(page, 'order:1'), handedOver);
    // Typing into the filter narrows the table in place and keeps the filter in the address bar.
    await page.fill('input[name=filter]', 'pool');
    await until(async () => (await page.locator('tbody[data-lock]').count()) === 1 && page.url().endsWith('/locks?filter=pool'), 'the filter to apply', 10_000);
    expect(await page.getAttribute('tbody[data-lock]', 'data-lock')).toBe('pool');
    expect(requests.filter((url) => !url.startsWith(`${app.url}/`))).toEqual([]);
    await page.close();
  });

  it('without JavaScript the page is the same table', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${app.url}/locks?filter=report:*`);
    expectShown(await shownLock(page, 'report:daily'), await inspect('report:daily', 'fair'));
    expect(await page.$('tbody[data-lock="catalog"]')).toBeNull(); // filtered out
    await context.close();
  });

  it('force-unlock, enabled in this app: the confirmation names the token, the lock goes, the waiter gets it', async () => {
    const page = await browser.newPage();
    const before = await inspect('report:daily', 'fair');
    await page.goto(`${app.url}/locks?filter=report:daily`);
    await page.click('tbody[data-lock="report:daily"] a.danger');
    expect(await page.textContent('#tokens')).toBe(String(before.holder!.token));
    await page.click('#confirm');
    expect(await page.getAttribute('#result', 'data-outcome')).toBe('removed');
    await b.waitFor((message) => message.type === 'held' && message.name === 'report:daily', 'report:daily for worker b');
    expect((await inspect('report:daily', 'fair')).holder!.instance.label).toMatch(/^worker-b@/);
    expect(app.log.join('')).toContain(`Lock "report:daily" (fair) was force-unlocked from the lock board`);
    await page.close();
  });
});
