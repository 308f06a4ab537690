import 'reflect-metadata';
import { setTimeout as sleep } from 'node:timers/promises';
import { Body, Controller, Get, Injectable, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { DistributedLock, DistributedLockModule, InvalidLockArgumentError, LockService } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';
import { until } from '../harness/wait.js';
import type { Redis } from 'ioredis';

/** A gate a handler waits on, opened by the test. */
let gate: { promise: Promise<void>; open: () => void } = newGate();
function newGate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
let readersInside = 0;
const accountsInUse = new Set<string>();
let overlaps = 0;

async function transferBody(from: string, to: string): Promise<void> {
  for (const account of [from, to]) {
    if (accountsInUse.has(account)) overlaps++;
    accountsInUse.add(account);
  }
  await sleep(2);
  accountsInUse.delete(from);
  accountsInUse.delete(to);
}

@Injectable()
class LedgerService {
  /** A provider method taking a multi-lock named from its arguments. */
  @DistributedLock({ nameFromArgs: (from: string, to: string) => [`account:${from}`, `account:${to}`] })
  async transfer(from: string, to: string): Promise<void> {
    await transferBody(from, to);
  }
}

@Controller()
class CatalogController {
  constructor(
    private readonly locks: LockService,
    private readonly ledger: LedgerService,
  ) {}

  @Get('catalog/:id')
  @DistributedLock({ name: 'catalog:{params.id}', kind: 'read' })
  async read() {
    readersInside++;
    await gate.promise;
    readersInside--;
    return { kind: this.locks.currentLock()?.name };
  }

  @Post('catalog/:id')
  @DistributedLock({ name: 'catalog:{params.id}', kind: 'write', waitTime: 0 })
  write() {
    return { written: true };
  }

  @Post('fair/:id')
  @DistributedLock({ name: 'queue:{params.id}', kind: 'fair' })
  async fair(@Param('id') id: string) {
    return { fairHeld: (await (this.locks.redis as Redis).exists(`lock:{queue:${id}}:fair`)) === 1 };
  }

  @Post('transfer')
  @DistributedLock({ name: ['account:{body.from}', 'account:{body.to}'] })
  async transfer(@Body() body: { from: string; to: string }) {
    await transferBody(body.from, body.to);
    return { tokens: Object.keys((this.locks.currentLock() as unknown as { tokens: Record<string, number> }).tokens).sort() };
  }

  @Post('transfer-unsafe')
  async transferUnsafe(@Body() body: { from: string; to: string }) {
    await transferBody(body.from, body.to);
    return {};
  }

  @Post('ledger')
  async ledgerTransfer(@Body() body: { from: string; to: string }) {
    await this.ledger.transfer(body.from, body.to);
    return {};
  }
}

describe('@DistributedLock kinds and several keys', () => {
  const redis = useRedis();
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [DistributedLockModule.forRoot({ connection: { mode: 'single', host: '127.0.0.1', port: redis.server().port } })],
      controllers: [CatalogController],
      providers: [LedgerService],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("kind 'read': requests read together; kind 'write' is refused (423) while they read", async () => {
    gate = newGate();
    const server = app.getHttpServer();
    const readers = [request(server).get('/catalog/1'), request(server).get('/catalog/1')].map((req) => req.then((res) => res));
    await until(() => readersInside === 2, 'both readers inside at once');
    const write = await request(server).post('/catalog/1');
    expect(write.status).toBe(423);
    gate.open();
    expect((await Promise.all(readers)).map((res) => res.status)).toEqual([200, 200]);
    expect((await request(server).post('/catalog/1')).status).toBe(201);
  });

  it("kind 'fair' takes the fair lock of that name", async () => {
    const res = await request(app.getHttpServer()).post('/fair/7');
    expect(res.body).toEqual({ fairHeld: true });
  });

  it('several keys: a multi-lock, all names held by one call', async () => {
    const res = await request(app.getHttpServer()).post('/transfer').send({ from: 'a', to: 'b' });
    expect(res.body).toEqual({ tokens: ['account:a', 'account:b'] });
  });

  describe('transfers in clashing orders over shared accounts', () => {
    const pairs = [
      ['a', 'b'],
      ['b', 'a'],
      ['b', 'c'],
      ['c', 'a'],
      ['a', 'c'],
      ['c', 'b'],
    ];
    async function run(path: string): Promise<number> {
      overlaps = 0;
      const server = app.getHttpServer();
      const responses = await Promise.all(pairs.flatMap(([from, to]) => Array.from({ length: 3 }, () => request(server).post(path).send({ from, to }))));
      expect(responses.every((res) => res.status === 201)).toBe(true);
      return overlaps;
    }

    it('control: without a lock, transfers over a shared account overlap', async () => {
      expect(await run('/transfer-unsafe')).toBeGreaterThan(0);
    });

    it('with key: [from, to] on the route: no overlap, no deadlock', async () => {
      expect(await run('/transfer')).toBe(0);
    });

    it('with nameFromArgs returning [from, to] on a provider: no overlap, no deadlock', async () => {
      expect(await run('/ledger')).toBe(0);
    });
  });

  it('a bad kind or an empty key list fails when the class is defined', () => {
    expect(() => DistributedLock({ name: 'x', kind: 'exclusive' as never })).toThrow(InvalidLockArgumentError);
    expect(() => DistributedLock({ name: [] })).toThrow(/non-empty array/);
  });
});
