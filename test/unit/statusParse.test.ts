import * as assert from 'node:assert/strict';
import { parseStatus } from '../../src/core/container/clone';

const OID = '14eaaa3aac9c939197a2b6f7be8ea477fcccb02a';
const H = '45b983be36b73c0788dc9cbcb76cbb80fc7bb057';

describe('parseStatus: git status --porcelain=v2 --branch, as release and status read it', () => {
  it("reads HEAD's commit and the changed tracked paths, spaces included", () => {
    const text = [
      `# branch.oid ${OID}`,
      '# branch.head main',
      '# branch.upstream origin/main',
      '# branch.ab +1 -0',
      `1 .M N... 100644 100644 100644 ${H} ${H} src/a b.ts`,
      `1 M. N... 100644 100644 100644 ${H} ${H} README.md`,
      '',
    ].join('\n');
    assert.deepEqual(parseStatus(text), { head: OID, changed: ['src/a b.ts', 'README.md'] });
  });

  it('names a rename by its new path, and an unmerged file by its path', () => {
    const text = [
      `# branch.oid ${OID}`,
      `2 R. N... 100644 100644 100644 ${H} ${H} R100 new name.ts\told name.ts`,
      `u UU N... 100644 100644 100644 100644 ${H} ${H} ${H} both.ts`,
    ].join('\n');
    assert.deepEqual(parseStatus(text).changed, ['new name.ts', 'both.ts']);
  });

  it('has no HEAD before the first commit, and nothing changed in a clean tree', () => {
    assert.deepEqual(parseStatus('# branch.oid (initial)\n# branch.head main\n'), { head: '', changed: [] });
  });
});
