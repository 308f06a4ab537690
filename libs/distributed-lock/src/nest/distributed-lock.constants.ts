/** Metadata key under which @DistributedLock stores its compiled metadata on a method. */
export const DISTRIBUTED_LOCK_METADATA = 'nestjs-distributed-lock:metadata';

/** Separates the names of a multi-key metadata inside the one resolved name string (never shown to users). */
export const MULTI_KEY_SEPARATOR = '\u001f';
