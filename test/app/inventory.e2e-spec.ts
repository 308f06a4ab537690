import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { LockService } from 'nestjs-distributed-lock';
import { AppModule } from '../../apps/inventory/src/app.module.js';
import { useRedis } from '../harness/use-redis.js';

/** Boots the inventory app against the test's Redis, configured through the environment like in production. */
async function bootApp(port: number, env: Record<string, string>): Promise<INestApplication> {
  const saved = { ...process.env };
  Object.assign(process.env, {
    DISTRIBUTED_LOCK_REDIS_MODE: 'single',
    DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
    DISTRIBUTED_LOCK_REDIS_PORT: String(port),
    ...env,
  });
  try {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    return app;
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

const PROTECTED = ['decorator', 'lock', 'try-lock'] as const;

describe('inventory app', () => {
  const redis = useRedis();
  let app: INestApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await bootApp(redis.server().port, {
      INVENTORY_WORK_MS: '5',
      DISTRIBUTED_LOCK_WAIT_TIME: '200ms',
      INVENTORY_TRY_WAIT: '200ms',
      INSTANCE_ID: 'test-app',
    });
    http = request(app.getHttpServer());
  });
  afterAll(async () => {
    await app?.close();
  });

  it('sets up a product and reports its state; refuses a bad stock; 404 for an unknown product', async () => {
    expect((await http.post('/products/p1').send({ stock: 3 }).expect(201)).body).toEqual({ productId: 'p1', stock: 3, orders: 0, highestToken: 0 });
    expect((await http.get('/products/p1').expect(200)).body).toMatchObject({ stock: 3, orders: 0 });
    await http.post('/products/p1').send({ stock: -1 }).expect(400);
    await http.post('/products/p1').send({}).expect(400);
    await http.post('/products/nope/purchase/lock').expect(404);
    await http.post('/products/nope/purchase/unsafe').expect(404);
  });

  it.each([...PROTECTED, 'unsafe'])('%s: sells until the stock is gone, then answers sold-out', async (endpoint) => {
    const id = `each-${endpoint}`;
    await http.post(`/products/${id}`).send({ stock: 2 }).expect(201);
    const first = await http.post(`/products/${id}/purchase/${endpoint}`).expect(201);
    expect(first.body).toMatchObject({ result: 'sold', stockLeft: 1, instance: 'test-app' });
    if (endpoint === 'unsafe') expect(first.body.token).toBeNull();
    else expect(first.body.token).toBeGreaterThan(0);
    await http.post(`/products/${id}/purchase/${endpoint}`).expect(201);
    expect((await http.post(`/products/${id}/purchase/${endpoint}`).expect(409)).body).toMatchObject({ result: 'sold-out' });
    expect((await http.get(`/products/${id}`)).body).toMatchObject({ stock: 0, orders: 2 });
  });

  it.each(['decorator', 'try-lock'])('%s: answers 423 with Retry-After while the product lock is held elsewhere', async (endpoint) => {
    const id = `busy-${endpoint}`;
    await http.post(`/products/${id}`).send({ stock: 5 }).expect(201);
    const locks = app.get(LockService);
    const holder = await locks.lock(`product:${id}`, '20s');
    const response = await http.post(`/products/${id}/purchase/${endpoint}`).expect(423);
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(19);
    await holder.unlock();
    expect((await http.get(`/products/${id}`)).body).toMatchObject({ stock: 5, orders: 0 });
  });

  it('30 concurrent buyers of a stock of 10: every protected endpoint sells exactly 10; the control oversells', async () => {
    const outcomes: Record<string, { sold: number; orders: number; stock: number }> = {};
    for (const endpoint of [...PROTECTED, 'unsafe']) {
      const id = `rush-${endpoint}`;
      await http.post(`/products/${id}`).send({ stock: 10 }).expect(201);
      // A buyer answered 423 (the 200 ms wait of this app ran out: a loaded machine) tries again, as a
      // client honouring Retry-After would: the stock must still sell exactly once per unit.
      const buy = async (): Promise<request.Response> => {
        for (let attempt = 1; ; attempt++) {
          const response = await http.post(`/products/${id}/purchase/${endpoint}`);
          if (response.status !== 423 || attempt === 5) return response;
        }
      };
      const responses = await Promise.all(Array.from({ length: 30 }, buy));
      const state = (await http.get(`/products/${id}`)).body as { stock: number; orders: number };
      outcomes[endpoint] = { sold: responses.filter((r) => r.status === 201).length, orders: state.orders, stock: state.stock };
    }
    for (const endpoint of PROTECTED) expect(outcomes[endpoint]).toEqual({ sold: 10, orders: 10, stock: 0 });
    expect(outcomes.unsafe!.orders).toBeGreaterThan(10);
  });

  it('GET /metrics: the lock metrics in the Prometheus format, lock names reduced to product:*', async () => {
    const response = await http.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.text;
    const count = (metric: string): number =>
      Number(new RegExp(`^${metric}\\{[^}]*lock_name="product:\\*"[^}]*lock_outcome="acquired"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 'NaN');
    expect(count('distributed_lock_wait_duration_count')).toBeGreaterThan(30);
    expect(text).toMatch(/^distributed_lock_hold_duration_bucket\{[^}]*lock_name="product:\*"[^}]*le="0.05"\} \d+/m);
    expect(text).toMatch(/^distributed_lock_acquisitions_total\{[^}]*lock_outcome="timeout"[^}]*\} \d+/m);
    expect(text).toMatch(/^distributed_lock_handovers_total\{[^}]*lock_handover_to="local"[^}]*\} \d+/m);
    expect(text).toMatch(/^distributed_lock_held\{[^}]*lock_kind="reentrant"[^}]*\} 0/m);
  });
});

describe('inventory app: a holder whose lease ran out cannot write', () => {
  const redis = useRedis();

  it('with a lease shorter than the work, stale holders are rejected by the fencing token and nothing is oversold', async () => {
    // Lease 60 ms, work 250 ms: every holder loses its lock while working, and the next one gets in.
    const app = await bootApp(redis.server().port, { INVENTORY_WORK_MS: '250', INVENTORY_LEASE_TIME: '60ms', DISTRIBUTED_LOCK_WAIT_TIME: '10s' });
    try {
      const http = request(app.getHttpServer());
      await http.post('/products/f1').send({ stock: 10 }).expect(201);
      const responses = await Promise.all([1, 2, 3, 4].map(() => http.post('/products/f1/purchase/lock')));
      const results = responses.map((r) => (r.body as { result: string }).result);
      const state = (await http.get('/products/f1')).body as { stock: number; orders: number; highestToken: number };

      expect(results.filter((r) => r === 'stale-token').length).toBeGreaterThan(0);
      expect(results.filter((r) => r === 'sold').length).toBe(state.orders);
      expect(state.stock + state.orders).toBe(10); // no lost update, although the holders overlapped
      expect(responses.filter((r) => r.status === 409).every((r) => (r.body as { result: string }).result === 'stale-token')).toBe(true);
    } finally {
      await app.close();
    }
  });
});
