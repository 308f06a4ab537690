/** Metadata key under which @DistributedLock stores its compiled spec on a method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:spec';

/** Separates the names of a multi-key spec inside the one resolved name string (never shown to users). */
export const MULTI_KEY_SEPARATOR = '\u001f';
