import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { brotliCompressSync } from 'node:zlib';
import type { ChainStep } from '../../src/core/chain/signedChain';
import { LockStorageError } from '../../src/core/errors';
import { parseRecord } from '../../src/core/recordCodec';
import { createMemoryDriver } from '../../src/core/stores/memory';
import { MAX_PAGE_BYTES, PACK_ABOVE_BYTES, packedJson, packPage, unpackPage } from '../../src/core/stores/packedPage';
import { jsonText, SerializedJson } from '../../src/core/stores/serializedJson';
import { CROWDED_CONTAINER, crowdedPage, crowdedSignedWindow } from '../helpers/crowdedPage';
import { assertHygienic } from '../helpers/hygiene';

interface Packed {
  lockstepPacked: string;
  bytes: number;
  sha256: string;
  data: string;
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

const SETTINGS = { leaseTtlMs: 2 * 3600_000 };
/** Strings of the crowded page that no error may quote. */
const PAGE_WORDS = ['lead@example.com', 'petitioner-1@example.com', 'dev-7@example.com', 'schema change', CROWDED_CONTAINER];

function damagedOrSame(stored: unknown, page: unknown, where: string): 'damaged' | 'same' {
  try {
    const read = unpackPage(stored, 'file');
    assert.equal(JSON.stringify(read), JSON.stringify(page), `${where}: it read as another page`);
    return 'same';
  } catch (error) {
    assert.ok(error instanceof LockStorageError, `${where}: ${String(error)}`);
    assertHygienic(error, PAGE_WORDS, where);
    return 'damaged';
  }
}

describe('packedPage: how a store-backed driver keeps a large lock page', () => {
  const page = crowdedPage();
  const json = JSON.stringify(page);

  it('keeps a page of up to 32 KiB of JSON as it is: what cat or redis-cli shows is the page', () => {
    const small = { v: 1, grant: 3, queue: [{ identity: 'ann@example.com', at: 1 }] };
    assert.equal(packPage(small, 'file'), small);
    const atBound = { pad: 'x'.repeat(PACK_ABOVE_BYTES - '{"pad":""}'.length) };
    assert.equal(Buffer.byteLength(JSON.stringify(atBound)), PACK_ABOVE_BYTES);
    assert.equal(packPage(atBound, 'file'), atBound, 'exactly at the bound: plain');
    const over = { pad: `${atBound.pad}x` };
    assert.equal(typeof (packPage(over, 'file') as Packed).lockstepPacked, 'string', 'one byte over: packed');
    assert.equal(unpackPage(small, 'file'), small, 'a plain value reads as it is');
  });

  it('gives the text a driver stores with the page stringified once: the same bytes as stringifying its stored value', () => {
    const small = { v: 1, grant: 3, queue: [{ identity: 'ann@example.com', at: 1 }], note: 'é \u2028 "q"' };
    const atBound = { pad: 'x'.repeat(PACK_ABOVE_BYTES - '{"pad":""}'.length) };
    const over = { pad: `${atBound.pad}x` };
    for (const [what, value] of [
      ['small', small],
      ['at the bound', atBound],
      ['one byte over', over],
      ['crowded', page],
    ] as const) {
      assert.equal(packedJson(value, 'sql'), JSON.stringify(packPage(value, 'sql')), what);
      assert.equal(jsonText(new SerializedJson(packedJson(value, 'sql') as string)), JSON.stringify(packPage(value, 'sql')), what);
    }
    assert.equal(packedJson(undefined, 'sql'), undefined, 'no JSON: the driver refuses it');
    assert.equal(jsonText(small), JSON.stringify(small), 'any other value: its JSON');
  });

  it('stores the crowded page (100 petitioners, 1,000 ranges, 100 blocks) in at most 64 KiB, and reads back exactly its bytes', () => {
    assert.ok(json.length > 3 * 64 * 1024, `the crowded page is ${json.length} bytes of JSON`);
    const stored = packPage(page, 'file') as Packed;
    const storedBytes = Buffer.byteLength(JSON.stringify(stored));
    assert.ok(storedBytes <= 64 * 1024, `stored in ${storedBytes} bytes`);
    assert.equal(stored.lockstepPacked, 'br');
    assert.equal(stored.sha256, sha256(json));
    assert.equal(stored.bytes, Buffer.byteLength(json));
    const read = unpackPage(JSON.parse(JSON.stringify(stored)), 'file');
    assert.equal(JSON.stringify(read), json);
    assert.deepEqual(parseRecord(read, 'file', CROWDED_CONTAINER, SETTINGS), parseRecord(page, 'file', CROWDED_CONTAINER, SETTINGS));
  });

  let steps: ChainStep[] = [];
  let envelope: unknown;
  before(() => {
    ({ steps, envelope } = crowdedSignedWindow());
  });

  it("stores a signed page's window of the crowded page (its record repeated in each step) in at most 64 KiB", () => {
    assert.ok(steps.length >= 4, `${steps.length} steps in the window`);
    const json = Buffer.byteLength(JSON.stringify(envelope));
    const stored = Buffer.byteLength(JSON.stringify(packPage(envelope, 'file')));
    assert.ok(stored <= 64 * 1024, `a window of ${steps.length} steps, ${json} bytes of JSON, stored in ${stored}`);
    assert.equal(JSON.stringify(unpackPage(JSON.parse(JSON.stringify(packPage(envelope, 'file'))), 'file')), JSON.stringify(envelope));
  });

  it('reads a changed character anywhere in the packed data as damage, never as another page (or a free lock)', () => {
    const stored = packPage(page, 'file') as Packed;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const { data } = stored;
    const positions = new Set<number>();
    for (let at = 0; at < 8; at++) positions.add(at).add(data.length - 1 - at);
    for (let at = 0; at < data.length; at += 997) positions.add(at);
    let damaged = 0;
    for (const at of positions) {
      if (data[at] === '=') continue;
      const other = alphabet[(alphabet.indexOf(data[at]) + 1 + (at % 63)) % 64];
      const changed = { ...stored, data: data.slice(0, at) + other + data.slice(at + 1) };
      if (damagedOrSame(changed, page, `character ${at} of ${data.length}`) === 'damaged') damaged++;
    }
    // Only the last character's unused low bits can change and leave the same bytes.
    assert.ok(damaged >= positions.size - 2, `${damaged} of ${positions.size} changes read as damage`);
  });

  it('reads a cut, padded, mislabelled or oversized packed page as damage, and one of an unknown codec as newer', () => {
    const stored = packPage(page, 'redis') as Packed;
    const cases: [string, unknown][] = [
      ['data cut short', { ...stored, data: stored.data.slice(0, stored.data.length - 400) }],
      ['data cut to nothing', { ...stored, data: '' }],
      ['data not base64', { ...stored, data: `${stored.data.slice(0, -4)}!!!!` }],
      ['data not a string', { ...stored, data: 7 }],
      ['a length one short', { ...stored, bytes: stored.bytes - 1 }],
      ['a length one long', { ...stored, bytes: stored.bytes + 1 }],
      ['a length not a count', { ...stored, bytes: '190000' }],
      ['a length past the bound', { ...stored, bytes: MAX_PAGE_BYTES + 1 }],
      ['a digest of another page', { ...stored, sha256: sha256('{}') }],
      ['no digest', { ...stored, sha256: undefined }],
      [
        'JSON that is not JSON',
        { lockstepPacked: 'br', bytes: 5, sha256: sha256('{"v":'), data: brotliCompressSync('{"v":').toString('base64') },
      ],
    ];
    for (const [what, value] of cases) {
      assert.throws(
        () => unpackPage(value, 'redis'),
        (e: unknown) => {
          assert.ok(e instanceof LockStorageError, `${what}: ${String(e)}`);
          assert.match(e.message, /damaged/, what);
          assertHygienic(e, PAGE_WORDS, what);
          return true;
        },
      );
    }
    assert.throws(
      () => unpackPage({ ...stored, lockstepPacked: 'zstd' }, 'redis'),
      (e: unknown) => e instanceof LockStorageError && /newer version/.test(e.message),
    );
  });

  it('reads a small packed value of a huge text (more than the length it states) as damage', () => {
    const huge = Buffer.alloc(1024 * 1024, 0x20);
    const bomb = brotliCompressSync(huge).toString('base64');
    assert.ok(bomb.length < 64 * 1024);
    assert.throws(() => unpackPage({ lockstepPacked: 'br', bytes: 100_000, sha256: sha256(huge), data: bomb }, 'sql'), LockStorageError);
  });

  it('refuses to write a page larger than any reader reads, and writes nothing', async () => {
    const driver = createMemoryDriver();
    const huge = { pad: 'x'.repeat(MAX_PAGE_BYTES) };
    await assert.rejects(driver.compareAndSwap('k', null, huge, { summary: 'huge' }), LockStorageError);
    assert.equal(await driver.read('k'), null);
  });

  it('goes through a driver unchanged: compare-and-swap on a packed page, against its revision', async () => {
    const driver = createMemoryDriver();
    const created = await driver.compareAndSwap('k', null, page, { summary: 'create' });
    assert.ok(created.ok);
    const read = await driver.read('k');
    assert.equal(JSON.stringify(read?.value), json);
    const next = { ...page, grant: page.grant + 1 };
    assert.deepEqual(await driver.compareAndSwap('k', '0', next, { summary: 'stale' }), { ok: false });
    assert.ok((await driver.compareAndSwap('k', created.revision, next, { summary: 'next' })).ok);
    const after = await driver.read('k');
    assert.ok(after !== null);
    assert.equal((after.value as { grant: number }).grant, page.grant + 1);
  });
});
