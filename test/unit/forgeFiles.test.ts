import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LockRefusedError } from '../../src/core/errors';
import { writeForgeCheck } from '../../src/core/forge/forgeInit';
import { FORGE_FILES, githubWorkflow, gitlabInclude } from '../../src/core/forge/forgeTemplates';
import { verdictMarkdown } from '../../src/core/verify/verdict';
import { useTempDir } from '../helpers/tempDir';

/** The ready-made checks: what docs/forges/ ships is what `forge init` writes, and it never overwrites. */
const ROOT = path.join(__dirname, '..', '..');
const VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('forge checks', () => {
  const dir = useTempDir('lockstep-forge');

  it('docs/forges/ holds exactly what forge init writes, for this version', () => {
    assert.equal(fs.readFileSync(path.join(ROOT, 'docs/forges/github/lockstep-verify.yml'), 'utf8'), githubWorkflow(VERSION));
    assert.equal(fs.readFileSync(path.join(ROOT, 'docs/forges/gitlab/lockstep-verify.gitlab-ci.yml'), 'utf8'), gitlabInclude(VERSION));
  });

  it('forge init writes the file once and refuses to overwrite it (or anything in its place)', () => {
    for (const forge of ['github', 'gitlab'] as const) {
      assert.deepEqual(writeForgeCheck(dir.path, forge, VERSION), { file: FORGE_FILES[forge] });
      assert.throws(
        () => writeForgeCheck(dir.path, forge, VERSION),
        (e: unknown) => e instanceof LockRefusedError && /exists already; forge init never overwrites/.test(e.message),
      );
    }
    fs.rmSync(path.join(dir.path, FORGE_FILES.github));
    fs.symlinkSync('/dev/null', path.join(dir.path, FORGE_FILES.github));
    assert.throws(() => writeForgeCheck(dir.path, 'github', VERSION), LockRefusedError);
  });

  it('the summary escapes what a commit subject or identity could inject into Markdown', () => {
    const md = verdictMarkdown({
      kind: 'push',
      outcome: 'failed',
      branch: 'main',
      old: 'a'.repeat(40),
      new: 'b'.repeat(40),
      reasons: ['x'],
      steps: [{ commit: 'b'.repeat(40), author: 'bob@example.com', subject: '| [click](http://x) <img>\nnext' }],
      history: { driver: 'git', reach: 'complete', trimmed: false },
    });
    assert.match(md, /\\\| \\\[click\\\]\(http:\/\/x\) \\<img\\> next \| \*\*not announced\*\*/);
    assert.match(md, /not proven/);
  });

  it("the summary's table is bounded, unannounced commits first", () => {
    const steps = Array.from({ length: 120 }, (_, i) => ({
      commit: i.toString(16).padStart(40, '0'),
      author: 'a@example.com',
      subject: `s${i}`,
      ...(i === 119 ? {} : { announcedBy: { who: 'a@example.com', grant: 1, at: 0 } }),
    }));
    const md = verdictMarkdown({
      kind: 'push',
      outcome: 'failed',
      branch: 'main',
      old: null,
      new: 'b'.repeat(40),
      reasons: [],
      steps,
      history: { driver: 'git', reach: 'complete', trimmed: false },
    });
    const rows = md.split('\n').filter(l => /^\| [0-9a-f]{12} /.test(l));
    assert.equal(rows.length, 50);
    assert.match(rows[0], /\*\*not announced\*\*/);
    assert.match(md, /… and 70 more commits/);
  });
});
