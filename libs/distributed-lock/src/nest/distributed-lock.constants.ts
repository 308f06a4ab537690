/** Metadata key under which @DistributedLock stores its compiled spec on a method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:spec';
