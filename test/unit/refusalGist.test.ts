import * as assert from 'node:assert/strict';
import { refusalGist } from '../../src/core/fencing';

/** The audit line's gist of a refusal: its first sentence, without the advice, and never longer than 120 characters. */
describe('fencing: the gist of a refusal for the audit line', () => {
  it('keeps the first sentence, ended by a full stop and a space', () => {
    assert.equal(refusalGist('Your grant #1 has ended. `lockstep status` says your next step.'), 'Your grant #1 has ended');
  });

  it('a semicolon ends the gist too, as does a full stop at the very end', () => {
    assert.equal(refusalGist('This clone does not hold the lock; acquire first.'), 'This clone does not hold the lock');
    assert.equal(refusalGist('No proof.'), 'No proof');
  });

  it('a full stop inside a word (a file name, a version) does not end it', () => {
    assert.equal(refusalGist('The .lockstep.json page v1.2 is gone. Restore it.'), 'The .lockstep.json page v1.2 is gone');
  });

  it('a message that begins with its end is an empty gist', () => {
    assert.equal(refusalGist('. Advice.'), '');
  });

  it('a message without an end is kept whole', () => {
    assert.equal(refusalGist('refused'), 'refused');
  });

  it('is cut at 120 characters exactly, with or without an end', () => {
    const long = 'x'.repeat(130);
    assert.equal(refusalGist(long), 'x'.repeat(120));
    assert.equal(refusalGist(`${long}. Advice.`), 'x'.repeat(120));
    assert.equal(refusalGist(`${'y'.repeat(120)}. Advice.`), 'y'.repeat(120));
    assert.equal(refusalGist(`${'z'.repeat(119)}. Advice.`), 'z'.repeat(119));
  });
});
