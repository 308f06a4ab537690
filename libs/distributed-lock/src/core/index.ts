export * from './errors/index.js';
export type { Duration } from './util/duration.js';
export { systemClock, type Clock, type CancelTimer } from './util/clock.js';
export type {
  ConnectionConfig,
  SingleConnectionConfig,
  ClusterConnectionConfig,
  MasterSlaveConnectionConfig,
  SentinelConnectionConfig,
  RedlockConnectionConfig,
  CommonConnectionConfig,
  HostPort,
  RedisMode,
} from './config/connection-config.js';
export type {
  RedisClient,
  RedisCompatibleClient,
  NodeRedisCompatibleClient,
  GlideClientSettings,
  GlideCommandClient,
  LockClientRedis,
} from './config/redis-client.js';
export type { CircuitBreakerOptions, LockClientOptions, ReplicaAckOptions } from './config/lock-client-options.js';
export * from './events/lock-events.js';
export type { PubSubChoice, PubSubFlavour } from './events/pubsub-choice.js';
export { LockHandle } from './context/lock-handle.js';
export type { LockOptions, TryLockOptions } from './locks/acquire-options.js';
export { BaseLock } from './locks/base-lock.js';
export { ReentrantLock } from './locks/reentrant/reentrant-lock.js';
export { RedLock } from './locks/redlock/red-lock.js';
export { FairLock } from './locks/fair/fair-lock.js';
export { ReadWriteLock, ReadLock, WriteLock } from './locks/read-write/read-write-lock.js';
export { MultiLock, MultiLockHandle } from './locks/multi/multi-lock.js';
export { LockClient } from './lock-client.js';
export type { LockClientStats, LockCircuitStatus } from './lock-client.composition.js';
export type { FairLockOptions } from './locks/lock-objects.js';
export { Semaphore, type SemaphoreOptions } from './locks/semaphore/semaphore.js';
export { PermitsHandle } from './locks/semaphore/permits-handle.js';
export { LeaderElection, type LeaderElectionOptions, type LeaderElectionEvents } from './leader/leader-election.js';
export { Leadership, type LeadershipRevoked } from './leader/leadership.js';
// Observability (metrics, inspection) and fenced writes
export type { LockMetricsOptions } from './metrics/lock-metrics.options.js';
export type { MeterProviderLike } from './metrics/open-telemetry-metrics.js';
export { LOCK_METER_NAME } from './metrics/lock-metrics.js';
export type {
  InspectedLockKind,
  LockInspection,
  LockHolderInfo,
  LockWaiterInfo,
  LockInstanceInfo,
  ListLocksOptions,
  ListLockNamesOptions,
  LockNameInfo,
  LockNameList,
  SemaphoreInfo,
} from './inspection/lock-inspection.js';
export { FencedResource, type FencingToken, type FencedRedis } from './fencing/fenced-resource.js';
export { FencedBatch, type FencedValue } from './fencing/fenced-batch.js';
