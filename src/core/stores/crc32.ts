/**
 * CRC-32 (IEEE 802.3, the polynomial of zip and PNG) of a string's bytes, as 8 lower-case hex digits.
 * Pure. The file driver frames its records with it: a CRC-32 detects every change of one byte (and
 * every burst of up to 32 bits), which is the damage a checksum there is for. (node:zlib has
 * `crc32` only from Node 20.15, and Lockstep supports every Node 20.)
 */

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** The CRC-32 of `text` encoded as UTF-8. */
export function crc32Hex(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0');
}
