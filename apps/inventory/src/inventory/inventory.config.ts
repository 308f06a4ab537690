import { InvalidLockConfigError, type Duration } from 'nestjs-distributed-lock';

/** The demo app's own settings, from environment variables (the lock library reads DISTRIBUTED_LOCK_*). */
export interface InventoryConfig {
  /** HTTP port (PORT, default 3000). */
  port: number;
  /** Business work inside the critical section, in ms (INVENTORY_WORK_MS, default 50). */
  workMs: number;
  /** Lease of the lock and tryLock endpoints (INVENTORY_LEASE_TIME; default: watchdog-renewed). */
  leaseTime: Duration | undefined;
  /** How long the tryLock endpoint waits (INVENTORY_TRY_WAIT, default 10s). */
  tryWait: Duration;
  /** Lease of the tryLock endpoint (INVENTORY_TRY_LEASE, default 10s: the seeds' tryLock(wait, lease)). */
  tryLease: Duration;
  /** Name of this instance in orders and logs (INSTANCE_ID, default the pid). */
  instanceId: string;
  /** Product the scheduled restock adds to (INVENTORY_RESTOCK_PRODUCT, default `restock-demo`). */
  restockProduct: string;
  /** Units added per restock run (INVENTORY_RESTOCK_AMOUNT, default 1). */
  restockAmount: number;
  /** Pause between two steps of the leader-only restock worker, in ms (INVENTORY_RESTOCK_WORKER_INTERVAL, default 1000). */
  restockWorkerIntervalMs: number;
}

export const INVENTORY_CONFIG = Symbol('INVENTORY_CONFIG');

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidLockConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}".`);
  }
  return value;
}

export function readInventoryConfig(env: NodeJS.ProcessEnv = process.env): InventoryConfig {
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    workMs: integer(env, 'INVENTORY_WORK_MS', 50, 0, 60_000),
    leaseTime: env.INVENTORY_LEASE_TIME?.trim() || undefined,
    tryWait: env.INVENTORY_TRY_WAIT?.trim() || '10s',
    tryLease: env.INVENTORY_TRY_LEASE?.trim() || '10s',
    instanceId: env.INSTANCE_ID?.trim() || `pid-${process.pid}`,
    restockProduct: env.INVENTORY_RESTOCK_PRODUCT?.trim() || 'restock-demo',
    restockAmount: integer(env, 'INVENTORY_RESTOCK_AMOUNT', 1, 1, 1_000_000),
    restockWorkerIntervalMs: integer(env, 'INVENTORY_RESTOCK_WORKER_INTERVAL', 1000, 1, 3_600_000),
  };
}
