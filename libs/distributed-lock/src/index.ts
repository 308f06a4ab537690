/**
 * nestjs-distributed-lock: Redisson-grade distributed locks for NestJS on Redis.
 * The public API; anything not exported here is internal.
 */
export * from './core/index.js';
export * from './nest/index.js';
