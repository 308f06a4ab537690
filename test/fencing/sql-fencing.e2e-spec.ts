import { setTimeout as sleep } from 'node:timers/promises';
import initSqlJs, { type Database } from 'sql.js';
import type { LockHandle } from 'nestjs-distributed-lock';
import { useRedis } from '../harness/use-redis.js';

/**
 * The README's pattern for a protected resource in SQL, tested on an embedded SQLite (sql.js, SQLite
 * compiled to WebAssembly: no database server, no native build), with the locks on a real Redis.
 * The table keeps the highest token that has touched a row; every statement of a holder carries its
 * token and is conditional on it, in one statement per step, so the check and the change are atomic.
 * The same SQL runs on PostgreSQL and MySQL (`:name` parameters become `$1` / `?`).
 */
const SCHEMA = `CREATE TABLE accounts (id TEXT PRIMARY KEY, balance INTEGER NOT NULL, fence_token INTEGER NOT NULL DEFAULT 0)`;
/** Read: claim the row for this token first (a newer holder's read makes an older holder's write fail). */
const CLAIM = `UPDATE accounts SET fence_token = :token WHERE id = :id AND fence_token <= :token`;
/** Write: only if no newer holder has read or written the row since. */
const WRITE = `UPDATE accounts SET balance = :balance, fence_token = :token WHERE id = :id AND fence_token <= :token`;

class StaleWrite extends Error {}

class Accounts {
  constructor(private readonly db: Database) {}

  /** Fenced read: records the token as seen, or refuses a stale one. */
  read(id: string, lock: LockHandle): number {
    this.db.run(CLAIM, { ':token': lock.token, ':id': id });
    if (this.db.getRowsModified() === 0) throw new StaleWrite(`token ${lock.token} is older than the last one seen for ${id}`);
    return this.db.exec('SELECT balance FROM accounts WHERE id = :id', { ':id': id })[0]!.values[0]![0] as number;
  }

  /** Fenced write: one conditional UPDATE; no row changed means a newer holder got there first. */
  write(id: string, lock: LockHandle, balance: number): void {
    this.db.run(WRITE, { ':balance': balance, ':token': lock.token, ':id': id });
    if (this.db.getRowsModified() === 0) throw new StaleWrite(`token ${lock.token} is older than the last one seen for ${id}`);
  }

  /** The same read and write without the token: the control. */
  readUnfenced(id: string): number {
    return this.db.exec('SELECT balance FROM accounts WHERE id = :id', { ':id': id })[0]!.values[0]![0] as number;
  }

  writeUnfenced(id: string, balance: number): void {
    this.db.run('UPDATE accounts SET balance = :balance WHERE id = :id', { ':balance': balance, ':id': id });
  }
}

describe('fencing a SQL resource: the token column and the conditional UPDATE (sql.js)', () => {
  const redis = useRedis();
  let db: Database;
  let accounts: Accounts;

  beforeEach(async () => {
    const SQL = await initSqlJs();
    db = new SQL.Database();
    db.run(SCHEMA);
    db.run(`INSERT INTO accounts (id, balance) VALUES ('a', 100)`);
    accounts = new Accounts(db);
  });
  afterEach(() => db.close());

  /** Holder A reads, pauses past its lease; B takes the lock, reads and writes; A wakes up and writes. */
  async function pausedHolder(fenced: boolean): Promise<{ balance: number; staleRefused: boolean }> {
    const locks = await redis.client();
    const a = await locks.lock('account:a', '80ms');
    const readByA = fenced ? accounts.read('a', a) : accounts.readUnfenced('a');
    await sleep(120); // A's pause: its lease runs out
    const b = await locks.lock('account:a', '5s');
    const readByB = fenced ? accounts.read('a', b) : accounts.readUnfenced('a');
    let staleRefused = false;
    try {
      if (fenced) accounts.write('a', a, readByA - 30);
      else accounts.writeUnfenced('a', readByA - 30); // A withdraws 30, from what it read before its pause
    } catch (error) {
      if (!(error instanceof StaleWrite)) throw error;
      staleRefused = true;
    }
    if (fenced) accounts.write('a', b, readByB - 50);
    else accounts.writeUnfenced('a', readByB - 50); // B withdraws 50
    await b.unlock();
    return { balance: accounts.readUnfenced('a'), staleRefused };
  }

  it("the paused holder's write is refused: the balance is what the holder that really held the lock wrote", async () => {
    expect(await pausedHolder(true)).toEqual({ balance: 50, staleRefused: true });
    expect(db.exec(`SELECT fence_token FROM accounts WHERE id = 'a'`)[0]!.values[0]![0]).toBeGreaterThan(1e15); // the exact token
  });

  it('control: without the token both writes land and one of them is lost', async () => {
    const result = await pausedHolder(false);
    expect(result.staleRefused).toBe(false);
    expect(result.balance).not.toBe(20); // 100 - 30 - 50 would have been right; B overwrote A's withdrawal
  });
});
