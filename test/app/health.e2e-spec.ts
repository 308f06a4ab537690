import 'reflect-metadata';
import { createHash } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLockHealthIndicator } from 'nestjs-distributed-lock';
import { AppModule } from '../../apps/inventory/src/app.module.js';
import { reentrantAcquire } from '../../libs/distributed-lock/src/core/locks/reentrant/reentrant-acquire.script.js';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';

async function bootApp(port: number): Promise<INestApplication> {
  const saved = { ...process.env };
  Object.assign(process.env, {
    DISTRIBUTED_LOCK_REDIS_MODE: 'single',
    DISTRIBUTED_LOCK_REDIS_HOST: '127.0.0.1',
    DISTRIBUTED_LOCK_REDIS_PORT: String(port),
    INSTANCE_ID: 'health-app',
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

describe('inventory /health (DistributedLockHealthIndicator through @nestjs/terminus)', () => {
  // This file's own redis-server: the tests pause, kill and restart it.
  const redis = useRedis();
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootApp(redis.server().port);
  });
  afterAll(async () => {
    redis.server().resume();
    await app?.close();
  });

  it('healthy: Redis answers, the lock scripts are cached (reloaded after SCRIPT FLUSH), the subscriber is connected', async () => {
    const { body } = await request(app.getHttpServer()).get('/health').expect(200);
    expect(body).toMatchObject({
      status: 'ok',
      instance: 'health-app',
      info: {
        locks: {
          status: 'up',
          mode: 'single',
          redis: { ok: true },
          scripts: { ok: true },
          subscriber: { ok: true, detail: 'connected' },
          circuit: { ok: true, detail: 'closed' },
        },
      },
    });

    const admin = redis.server().client();
    await admin.script('FLUSH');
    const result = await app.get(DistributedLockHealthIndicator).isHealthy('locks');
    expect(result.locks.status).toBe('up');
    expect(result.locks.scripts.detail).toMatch(/loaded now/);
    const sha = createHash('sha1').update(reentrantAcquire.lua).digest('hex');
    const [exists] = (await admin.script('EXISTS', sha)) as number[];
    await admin.quit();
    expect(exists).toBe(1);
  });

  it('unhealthy while Redis is frozen (PING times out), healthy again when it resumes', async () => {
    redis.server().pause();
    try {
      const { body } = await request(app.getHttpServer()).get('/health').expect(503);
      expect(body).toMatchObject({ status: 'error', error: { locks: { status: 'down', redis: { ok: false } } } });
      expect(body.error.locks.redis.detail).toMatch(/no answer within 1000 ms/);
    } finally {
      redis.server().resume();
    }
    await until(async () => (await request(app.getHttpServer()).get('/health')).status === 200, 'health to recover');
  });

  it('unhealthy when Redis is killed (connections down), healthy again after it restarts', async () => {
    await redis.server().kill();
    await until(async () => (await request(app.getHttpServer()).get('/health')).status === 503, 'health to fail');
    const { body } = await request(app.getHttpServer()).get('/health').expect(503);
    expect(body.error.locks).toMatchObject({ status: 'down', redis: { ok: false } });
    expect(JSON.stringify(body)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/); // no owner ids
    await redis.server().restart();
    await until(async () => (await request(app.getHttpServer()).get('/health')).status === 200, 'health to recover', 20_000);
  });
});
