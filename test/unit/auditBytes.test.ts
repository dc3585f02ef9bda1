import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AuditLine } from '../../src/core/lockRecord';
import { lineBytes, linesBytes } from '../../src/core/record/audit';

/**
 * The audit's byte budget is measured over a whole section in one JSON text (linesBytes) and line by line where a
 * trim drops lines (lineBytes). The two must agree exactly, or a page would be trimmed differently by the two
 * paths: for any lines, with quotes, backslashes, controls, non-ASCII and astral characters in their texts.
 */
describe('audit byte budget: one JSON text of the lines measures what the lines measure one by one', () => {
  const text = fc.string({ unit: fc.constantFrom('a', 'Z', '"', '\\', '\n', '\u0001', 'é', '漢', '😀', '\u2028', ' '), maxLength: 40 });
  const line: fc.Arbitrary<AuditLine> = fc.record(
    {
      at: fc.integer({ min: 0, max: 2 ** 45 }),
      who: text,
      action: fc.constantFrom('acquire', 'petition', 'release', 'heartbeat', 'clear'),
      grant: fc.nat(),
      outcome: fc.constantFrom('done', 'refused'),
      detail: text,
    },
    { requiredKeys: ['at', 'who', 'action', 'grant', 'outcome'] },
  ) as fc.Arbitrary<AuditLine>;

  it('for any list of lines (the empty one included)', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), lines => {
        // Fresh copies: the per-line measure caches by object, the whole-section one does not.
        const sum = lines.map(l => lineBytes({ ...l })).reduce((a, b) => a + b, 0);
        assert.equal(linesBytes(lines.map(l => ({ ...l }))), sum);
      }),
      { numRuns: 300 },
    );
  });
});
