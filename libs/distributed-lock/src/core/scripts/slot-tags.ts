/**
 * Redis Cluster's key slots (CRC16/XMODEM of the hash tag, modulo 16384), and for each slot a short
 * tag that hashes to it: the shared fencing counter of a slot is named with it (see LockKeys.fence),
 * so it lives in the same slot as the locks whose tokens it draws.
 */
const SLOTS = 16384;

const TABLE = ((): Uint16Array => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** The cluster slot of keys tagged `{tag}` (CRC16/XMODEM over the tag's UTF-8 bytes, as Redis computes it). */
export function slotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag, 'utf8')) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % SLOTS;
}

let tags: string[] | undefined;

/** A short tag whose keys live in `slot` (the first of `f0`, `f1`, ... that hashes there), computed once for every slot. */
export function slotTag(slot: number): string {
  if (!tags) {
    const found: string[] = new Array<string>(SLOTS);
    let missing = SLOTS;
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
