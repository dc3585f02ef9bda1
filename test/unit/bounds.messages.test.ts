import * as assert from 'node:assert/strict';
import { assertTtl, assertWait, parseSeconds, parseTtlSeconds } from '../../src/core/bounds';
import { LockConfigurationError } from '../../src/core/errors';

/** What the bounds say when they refuse, and the edges of their parsing (found by mutation testing, docs/mutation.md). */
const refusal = (fn: () => unknown): LockConfigurationError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof LockConfigurationError) return e;
    throw e;
  }
  throw new assert.AssertionError({ message: 'expected a LockConfigurationError' });
};

describe('bounds: the refusals name the setting and its range', () => {
  it('assertTtl and assertWait', () => {
    assert.match(refusal(() => assertTtl(0)).message, /^The ttl must be a number of seconds from 1 to 86400;/);
    assert.match(refusal(() => assertTtl(86_401, 'lease')).message, /^The lease must be/);
    assert.equal(refusal(() => assertWait(61)).message, 'The wait must be a number of seconds from 0 to 60.');
  });
  it('parseTtlSeconds gives an example within the bounds: 30, or the floor when that is higher', () => {
    assert.match(refusal(() => parseTtlSeconds('0')).message, /from 1 to 86400, e\.g\. 30;/);
    assert.match(refusal(() => parseTtlSeconds('1', 'ttl', { min: 60, max: 86_400 })).message, /from 60 to 86400, e\.g\. 60;/);
  });
  it('parseSeconds', () => {
    assert.equal(refusal(() => parseSeconds('soon', 'every')).message, 'The every must be a number of seconds, e.g. 30.');
  });
});

describe('bounds: parsing edges', () => {
  it('parseSeconds takes more than one decimal digit', () => {
    assert.equal(parseSeconds('1.25', 'wait'), 1.25);
    assert.equal(parseSeconds(' 0.125 ', 'wait'), 0.125);
  });
});
