import { hashSlot, SLOT_COUNT } from '../util/key-slot.js';

/*
 * Redis Cluster's key slots (CRC16/XMODEM of the hash tag, modulo 16384; util/key-slot.ts), and for
 * each slot a short tag that hashes to it: the shared fencing counter of a slot is named with it (see
 * LockKeys.fence), so it lives in the same slot as the locks whose tokens it draws.
 */

/** The cluster slot of keys tagged `{tag}` (CRC16/XMODEM over the tag's UTF-8 bytes, as Redis computes it). */
export const slotOf: (tag: string) => number = hashSlot;

let tags: string[] | undefined;

/** A short tag whose keys live in `slot` (the first of `f0`, `f1`, ... that hashes there), computed once for every slot. */
export function slotTag(slot: number): string {
  if (!tags) {
    const found: string[] = new Array<string>(SLOT_COUNT);
    let missing = SLOT_COUNT;
    for (let i = 0; missing > 0; i++) {
      const candidate = `f${i.toString(36)}`;
      const s = slotOf(candidate);
      if (found[s] === undefined) {
        found[s] = candidate;
        missing -= 1;
      }
    }
    tags = found;
  }
  return tags[slot]!;
}
