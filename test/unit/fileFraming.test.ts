import * as assert from 'node:assert/strict';
import { crc32Hex } from '../../src/core/stores/crc32';
import { frameRevision, unframeRevision } from '../../src/core/stores/revisionFraming';
import { encodeRecord, logFormat, nextLegacyRecord, nextRecord, type Framed } from '../../src/core/stores/slotLogFraming';

/**
 * The file driver's record framing (issue #23, "damage is damage"): a record cut short by a crash
 * is told apart from a record that is damaged, and one changed byte anywhere is damage.
 */

/** Reads a whole log text as fileSlotLog.ts does: the bodies read, and how the text ended. */
function readLog(
  text: string,
  next: (text: string) => Framed = nextRecord,
): { bodies: string[]; ended: 'clean' | 'incomplete' | 'damaged'; torn: number } {
  const bodies: string[] = [];
  let torn = 0;
  let rest = text;
  while (rest.length > 0) {
    const framed = next(rest);
    if (framed.kind === 'incomplete' || framed.kind === 'damaged') return { bodies, ended: framed.kind, torn };
    if (framed.kind === 'torn') torn++;
    else bodies.push(framed.json);
    rest = rest.slice(framed.end);
  }
  return { bodies, ended: 'clean', torn };
}

const bodies = [
  '{"s":0,"k":"snap","v":null}',
  '{"s":1,"k":"write","v":{"v":1,"counter":1},"n":"0123456789ab"}',
  '{"s":2,"k":"write","v":{"v":1,"counter":2},"n":"ba9876543210"}',
];
const records = bodies.map(encodeRecord);
const log = records.join('');

describe('file driver record framing', () => {
  it('CRC-32 matches the standard check values', () => {
    assert.equal(crc32Hex(''), '00000000');
    assert.equal(crc32Hex('123456789'), 'cbf43926');
    assert.equal(crc32Hex('The quick brown fox jumps over the lazy dog'), '414fa339');
  });

  it('reads back what it framed, record by record', () => {
    assert.deepEqual(readLog(log), { bodies, ended: 'clean', torn: 0 });
    assert.equal(logFormat(log), 'v2');
    assert.match(records[0], /^\n@v2 [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} \{/);
  });

  it('a log cut at any byte (a torn append at the end) reads as the records before the cut, never as damage', () => {
    for (let cut = 0; cut < log.length; cut++) {
      const read = readLog(log.slice(0, cut));
      const whole = records.filter((_, i) => records.slice(0, i + 1).join('').length <= cut).length;
      assert.deepEqual(read.bodies, bodies.slice(0, whole), `cut at ${cut}`);
      assert.notEqual(read.ended, 'damaged', `cut at ${cut}`);
    }
  });

  it('one changed byte anywhere in any record is damage, never a shorter log', () => {
    for (let at = 0; at < log.length; at++) {
      for (const change of [0x01, 0x20, 0x80]) {
        const damaged = log.slice(0, at) + String.fromCharCode(log.charCodeAt(at) ^ change) + log.slice(at + 1);
        const read = readLog(damaged);
        assert.equal(
          read.ended,
          'damaged',
          `byte ${at} ^ 0x${change.toString(16)}: read ${read.bodies.length} records, ended ${read.ended}`,
        );
      }
    }
  });

  it('a record cut short and then appended after (a writer killed mid-write) is skipped, at any cut', () => {
    for (let cut = 1; cut < records[1].length; cut++) {
      const read = readLog(records[0] + records[1].slice(0, cut) + records[2]);
      assert.deepEqual(read, { bodies: [bodies[0], bodies[2]], ended: 'clean', torn: 1 }, `cut at ${cut}`);
    }
  });

  it('a record cut short and followed by anything but a verified record is damage', () => {
    const bad = records[2].replace('"counter":2', '"counter":3');
    assert.equal(readLog(records[0] + records[1].slice(0, 40) + bad).ended, 'damaged');
    assert.equal(readLog(`${records[0]}${records[1].slice(0, 10)}\n@garbage that is no record at all`).ended, 'damaged');
  });

  it('a record longer than the limit is damage, even when its header verifies', () => {
    const start = `\n@v2 00200000 ${crc32Hex('')} `;
    assert.deepEqual(nextRecord(`${start}${crc32Hex(start)} {`), { kind: 'damaged', what: 'a record longer than any this driver writes' });
  });

  it('tells the earlier framing apart and reads it as strictly as it allows', () => {
    const legacy = bodies.map(b => `\n@${b.length}:${b}`).join('');
    assert.equal(logFormat(legacy), 'legacy');
    assert.equal(logFormat('garbage'), 'damaged');
    assert.equal(logFormat('\n@'), undefined);
    assert.deepEqual(readLog(legacy, nextLegacyRecord), { bodies, ended: 'clean', torn: 0 });
    // Cut at the end: the records before; overrun by the next record: torn.
    assert.deepEqual(readLog(legacy.slice(0, legacy.length - 5), nextLegacyRecord).bodies, bodies.slice(0, 2));
    const parts = bodies.map(b => `\n@${b.length}:${b}`);
    assert.deepEqual(readLog(parts[0] + parts[1].slice(0, 20) + parts[2], nextLegacyRecord), {
      bodies: [bodies[0], bodies[2]],
      ended: 'clean',
      torn: 1,
    });
    // A record that does not end where the next starts, or a header that is no header: damage.
    assert.equal(
      readLog(parts[0] + parts[1].replace(`@${bodies[1].length}:`, `@${bodies[1].length - 1}:`) + parts[2], nextLegacyRecord).ended,
      'damaged',
    );
    assert.equal(readLog(`${parts[0]}\n@1x:{}${parts[2]}`, nextLegacyRecord).ended, 'damaged');
  });

  it('container record revisions: framed with a checksum; any changed byte fails; bare JSON of the earlier framing still reads', () => {
    const json = '{"l":["0123456789ab"],"v":{"grant":3,"holder":"ana"}}';
    const framed = frameRevision(json);
    assert.equal(unframeRevision(framed), json);
    for (let at = 0; at < framed.length; at++) {
      const damaged = framed.slice(0, at) + String.fromCharCode(framed.charCodeAt(at) ^ 0x01) + framed.slice(at + 1);
      const read = unframeRevision(damaged);
      // Either refused outright, or (a byte of the prefix turned into `{`) not JSON.
      assert.ok(
        read === undefined ||
          (() => {
            try {
              JSON.parse(read);
              return false;
            } catch {
              return true;
            }
          })(),
        `byte ${at}`,
      );
    }
    assert.equal(unframeRevision(json), json);
    assert.equal(unframeRevision('3:00000000:{}'), undefined);
  });
});
