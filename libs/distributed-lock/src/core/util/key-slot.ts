/**
 * Redis Cluster's hash slots: CRC16/XMODEM modulo 16384, of a key's hash tag when it has one. The
 * library names keys by slot (scripts/slot-tags.ts) and the in-memory store's strict-keys mode checks
 * that a script's keys share one (memory/strict-keys.ts).
 */
export const SLOT_COUNT = 16384;

const TABLE = ((): Uint16Array => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/** The slot of `text` hashed whole (CRC16/XMODEM over its UTF-8 bytes, modulo 16384): the slot of keys tagged `{text}`. */
export function hashSlot(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, 'utf8')) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % SLOT_COUNT;
}

/**
 * The part of `key` Redis Cluster hashes: its hash tag, the text between the first `{` and the next
 * `}`, if that is not empty; otherwise the whole key (`a{}b` and `a{b` are hashed whole). Keys with
 * the same hashed part share a slot: the library's script batches group calls by it.
 */
export function hashedPart(key: string): string {
  const open = key.indexOf('{');
  const close = open >= 0 ? key.indexOf('}', open + 1) : -1;
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** The slot Redis Cluster puts `key` in: the slot of its hashed part (see hashedPart). */
export function keySlot(key: string): number {
  return hashSlot(hashedPart(key));
}
