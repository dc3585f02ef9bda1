import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { decodeLinkTarget, encodeLinkTarget } from '../../src/core/stores/linkTarget';
import { frameRevision } from '../../src/core/stores/revisionFraming';

describe('file driver link targets (linkTarget.ts)', () => {
  const text = frameRevision(JSON.stringify({ l: ['abc'], v: { note: 'need to fix src/app.ts', path: 'C:\\srv\\repo', word: 'ünï' } }));

  it('on Windows: a target holds nothing Node on win32 rewrites or resolves (no `/`, no `\\`, no drive prefix)', () => {
    const target = encodeLinkTarget(text);
    assert.doesNotMatch(target, /[/\\:]/);
    assert.equal(target.replace(/\//g, '\\'), target, 'the rewrite of preprocessSymlinkDestination changes nothing');
    assert.equal(path.win32.isAbsolute(target), false);
    assert.equal(decodeLinkTarget(target), text);
  });

  it('reads a target written before the encoding (the framed text itself) as it is', () => {
    assert.equal(decodeLinkTarget(text), text);
  });

  it('a changed character is damage (undefined), also one that base64 would decode to the same bytes', () => {
    const target = encodeLinkTarget('ab'); // "YWI": its last character carries two unused bits
    assert.equal(decodeLinkTarget(target), 'ab');
    assert.equal(decodeLinkTarget(`${target.slice(0, -1)}J`), undefined, 'same bytes, another spelling');
    assert.equal(decodeLinkTarget(`${target}=`), undefined, 'padding');
    assert.equal(decodeLinkTarget(`${target.slice(0, -1)}@`), undefined, 'not base64url');
    assert.equal(decodeLinkTarget(`b64,${Buffer.from([0xff, 0xfe]).toString('base64url')}`), undefined, 'not UTF-8');
  });
});
