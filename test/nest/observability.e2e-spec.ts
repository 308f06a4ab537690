import 'reflect-metadata';
import { Injectable, Logger, Module, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { trace, type Span, type SpanOptions, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { DistributedLock, DistributedLockModule, LockService, type LockClient } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { nextEvent } from '../harness/wait.js';

/** A minimal in-test tracer: records spans (name, attributes, status, ended) instead of exporting them. */
interface RecordedSpan {
  name: string;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string } | undefined;
  ended: boolean;
}
const recorded: RecordedSpan[] = [];
const tracer = {
  startSpan(name: string, options?: SpanOptions): Span {
    const span: RecordedSpan = { name, attributes: { ...(options?.attributes ?? {}) }, status: undefined, ended: false };
    recorded.push(span);
    const api = {
      setAttributes: (attributes: Record<string, unknown>) => (Object.assign(span.attributes, attributes), api),
      setAttribute: (key: string, value: unknown) => ((span.attributes[key] = value), api),
      setStatus: (status: { code: number; message?: string }) => ((span.status = status), api),
      end: () => {
        span.ended = true;
      },
      spanContext: () => ({ traceId: '0'.repeat(31) + '1', spanId: '0'.repeat(15) + '1', traceFlags: 1 }),
      isRecording: () => true,
      recordException: () => undefined,
      addEvent: () => api,
      addLink: () => api,
      addLinks: () => api,
      updateName: () => api,
    };
    return api as unknown as Span;
  },
} as unknown as Tracer;
const provider: TracerProvider = { getTracer: () => tracer };

@Injectable()
class Reports {
  @DistributedLock({ nameFromArgs: (id: string) => `report:${id}`, waitTime: 0 })
  async build(id: string): Promise<string> {
    return `report ${id}`;
  }
}

describe('observability of decorated calls', () => {
  const redis = useRedis();
  let app: INestApplicationContext;
  let locks: LockService;
  let other: LockClient;

  beforeAll(async () => {
    trace.setGlobalTracerProvider(provider);
    @Module({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port }, watchdogTimeout: '300ms' })],
      providers: [Reports],
    })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef;
    await app.init();
    locks = app.get(LockService);
  });
  beforeEach(async () => {
    recorded.length = 0;
    other = await redis.client();
  });
  afterAll(async () => {
    await app?.close();
    trace.disable();
  });

  it('emits acquired and released for a decorated call, with timings and the fencing token, never an owner id', async () => {
    const acquired = nextEvent<[Record<string, unknown>]>(locks.events, 'acquired', (e) => e.name === 'report:r1');
    const released = nextEvent<[Record<string, unknown>]>(locks.events, 'released', (e) => e.name === 'report:r1');
    await app.get(Reports).build('r1');
    const [a] = await acquired;
    const [r] = await released;
    expect(a).toMatchObject({ name: 'report:r1', kind: 'reentrant', reentrant: false });
    expect(typeof a.waitedMs).toBe('number');
    expect(typeof r.heldMs).toBe('number');
    // The token is what a fenced write needs and proves nothing to Redis; the owner id (which could
    // release the lock) never leaves the process.
    expect(r.token).toBe(a.token);
    expect(a.token).toEqual(expect.any(Number));
    for (const event of [a, r]) expect(Object.keys(event).sort()).not.toContain('owner');
  });

  it("emits failed (outcome 'timeout') when the lock stays busy", async () => {
    const holder = await other.lock('report:r2', '20s');
    const failed = nextEvent<[Record<string, unknown>]>(locks.events, 'failed', (e) => e.name === 'report:r2');
    await expect(app.get(Reports).build('r2')).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
    expect((await failed)[0]).toMatchObject({ outcome: 'timeout' });
    await holder.unlock();
  });

  it('renewed events carry how long the renewal took; a slow one (> 1/3 of the lease) is logged as a warning', async () => {
    const held = await locks.lock('report:renewed');
    const [renewed] = await nextEvent<[{ name: string; leaseMs: number; tookMs: number }]>(locks.events, 'renewed', (e) => e.name === 'report:renewed');
    expect(renewed.leaseMs).toBe(300);
    expect(renewed.tookMs).toBeGreaterThanOrEqual(0);
    await held.unlock();

    const warnings: string[] = [];
    const original = Logger.prototype.warn;
    Logger.prototype.warn = function (message: unknown): void {
      warnings.push(String(message));
    };
    try {
      locks.events.emit('renewed', { name: 'slow', kind: 'reentrant', leaseMs: 300, tookMs: 150 });
      locks.events.emit('renewed', { name: 'fast', kind: 'reentrant', leaseMs: 300, tookMs: 20 });
    } finally {
      Logger.prototype.warn = original;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Renewing lock "slow" took 150 ms, over a third of its 300 ms lease/);
  });

  it('with @opentelemetry/api present: one lock.acquire span per decorated acquisition, with name, kind, outcome and wait', async () => {
    await app.get(Reports).build('s1');
    const holder = await other.lock('report:s2', '20s');
    await expect(app.get(Reports).build('s2')).rejects.toMatchObject({ code: 'LOCK_ACQUIRE_TIMEOUT' });
    await holder.unlock();
    expect(recorded.map((span) => [span.name, span.attributes['lock.name'], span.attributes['lock.outcome'], span.ended])).toEqual([
      ['lock.acquire', 'report:s1', 'acquired', true],
      ['lock.acquire', 'report:s2', 'timeout', true],
    ]);
    for (const span of recorded) {
      expect(span.attributes['lock.kind']).toBe('reentrant');
      expect(typeof span.attributes['lock.waited_ms']).toBe('number');
      expect(Object.keys(span.attributes).sort()).toEqual(['lock.kind', 'lock.name', 'lock.outcome', 'lock.waited_ms']);
    }
  });
});
