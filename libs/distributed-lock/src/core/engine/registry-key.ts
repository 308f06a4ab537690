import type { LeaseResource } from './lease-resource.js';

/**
 * One owner's hold on one lock, as the registry files it. Computed once per acquisition (and per held
 * lock) and passed along, rather than rebuilt by every lookup on the lock path.
 */
export type RegistryKey = string & { readonly __registryKey: never };

export function registryKey(owner: string, resource: LeaseResource): RegistryKey {
  return `${owner}\u0000${resource.kind}\u0000${resource.id}` as RegistryKey;
}
