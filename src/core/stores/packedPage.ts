import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import { LockStorageError } from '../errors';

/**
 * How a store-backed driver (file, SQL, Redis, etcd, memory) keeps a large lock page: a page whose JSON
 * is larger than {@link PACK_ABOVE_BYTES} is stored compressed, as one small JSON object
 *
 *     {"lockstepPacked":"br","bytes":<the JSON's length in bytes>,"sha256":"<the JSON's digest>","data":"<base64 of its Brotli>"}
 *
 * and every read hands back the page exactly as written. A crowded page (100 petitioners, 1,000 leased
 * ranges, 100 blocks: ~190 KiB of JSON) is stored in about 10 KiB (issue 30: a page ≤ 64 KB), while every
 * page a usual team writes stays plain JSON that `cat` or `redis-cli` shows. Pure.
 *
 * Why Brotli and not zlib's deflate: deflate looks back 32 KiB, Brotli (here) 1 MiB. A signed page's
 * window (chainLayout.ts) repeats the record, 110 KiB of ranges and all, in each of its steps: deflate
 * stores a crowded one in ~100 KiB, Brotli in ~18 KiB, in less CPU. Brotli has no checksum of its own,
 * so the packed value carries the JSON's SHA-256.
 *
 * Why here, below the page's meaning: the record, every transition, every signature (the signed chain
 * packs as one value) and every comparison of what was written stay the same; only the bytes a store
 * keeps change. The git driver is not packed: git deflates each object it stores and sends, and its
 * server guard requires the exact JSON bytes of each transition.
 *
 * A packed page that does not unpack (a changed byte fails the digest, a cut base64 string fails its
 * shape, a length that does not match) is damage: LockStorageError, never a free lock.
 */

/** Pages up to this many bytes of JSON are stored as they are. */
export const PACK_ABOVE_BYTES = 32 * 1024;
/** A page this large, unpacked, is more than any transition writes: refused on write, damage on read. */
export const MAX_PAGE_BYTES = 8 * 1024 * 1024;

const CODEC = 'br';
/** Brotli's quality 4 (fast, and within 2% of its best on lock pages) and a window that covers a whole signed window. */
const BROTLI = { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_LGWIN]: 20 };
const HEX64 = /^[0-9a-f]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface Packed {
  readonly lockstepPacked: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly data: string;
}

/** The value a driver stores for `page`: `page` itself when small, else its packed form. */
export function packPage(page: unknown, driver: string): unknown {
  const json = JSON.stringify(page);
  return json === undefined ? page : (packed(json, driver) ?? page); // undefined: the driver's own check refuses it
}

/**
 * The JSON text a driver stores for `page` (what `JSON.stringify(packPage(page))` gives), with the page
 * stringified once: a write of a page below the bound costs one `JSON.stringify`, not two. Undefined for a
 * value that has no JSON (the driver's own check refuses it).
 */
export function packedJson(page: unknown, driver: string): string | undefined {
  const json = JSON.stringify(page);
  if (json === undefined) return undefined;
  const value = packed(json, driver);
  return value === undefined ? json : JSON.stringify(value);
}

/** The packed form of a page's JSON text; undefined when the page is small enough to be stored as it is. */
function packed(json: string, driver: string): Packed | undefined {
  const bytes = Buffer.byteLength(json);
  if (bytes <= PACK_ABOVE_BYTES) return undefined;
  if (bytes > MAX_PAGE_BYTES)
    throw new LockStorageError(
      driver,
      `A lock page must be at most ${MAX_PAGE_BYTES} bytes of JSON; this write was refused and nothing was stored.`,
    );
  const data = brotliCompressSync(json, { params: { ...BROTLI, [constants.BROTLI_PARAM_SIZE_HINT]: bytes } }).toString('base64');
  return { lockstepPacked: CODEC, bytes, sha256: sha256(json), data };
}

/** The page a stored value holds: a packed value unpacked, anything else as it is. */
export function unpackPage(stored: unknown, driver: string): unknown {
  if (!isPackedShape(stored)) return stored;
  if (stored.lockstepPacked !== CODEC) {
    throw new LockStorageError(
      driver,
      'The lock page is stored in a packed form this version of Lockstep does not know: a newer version wrote it. Upgrade Lockstep in this clone to read it; do not adopt over it with this version.',
    );
  }
  const damaged = (what: string) =>
    new LockStorageError(
      driver,
      `The container's lock page is damaged (its packed form ${what}), so the lock cannot be treated as free. Restore it from the store's history or backups; see the README on damaged records.`,
    );
  const { bytes, sha256: digest, data } = stored;
  if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > MAX_PAGE_BYTES) throw damaged('states an impossible length');
  if (typeof digest !== 'string' || !HEX64.test(digest)) throw damaged('has no digest');
  if (typeof data !== 'string' || data.length % 4 !== 0 || !BASE64.test(data)) throw damaged('is not base64');
  let json: Buffer;
  try {
    // Bounded: a crafted value cannot make a reader decompress more than the stated length allows.
    json = brotliDecompressSync(Buffer.from(data, 'base64'), { maxOutputLength: bytes });
  } catch {
    throw damaged('does not decompress');
  }
  if (json.length !== bytes) throw damaged('does not hold the length it states');
  if (sha256(json) !== digest) throw damaged('does not hold the page its digest names');
  try {
    return JSON.parse(json.toString('utf8'));
  } catch {
    throw damaged('does not hold JSON'); // no cause: its message would quote the page
  }
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function isPackedShape(v: unknown): v is Packed {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, 'lockstepPacked');
}
