import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { childEnv, runTs } from '../helpers/children';
import { useTempDir } from '../helpers/tempDir';

/**
 * Issue 15, bad input: `chaos/run.ts --path DIR` refuses a folder that holds anything it did not create
 * (exit 3, the folder untouched) and, after a real run in a folder it was given, removes only what it made.
 */
describe('chaos harness: only stores it owns', function () {
  this.timeout(120_000);
  const tmp = useTempDir('lockstep-chaos-owned');
  const chaos = (dir: string, driver: string) =>
    runTs('chaos/run.ts', ['--seconds', '2', '--workers', '2', '--names', '1', '--drivers', driver, '--path', dir], childEnv({}), 90_000);

  for (const driver of ['file', 'sqlite']) {
    it(`${driver}: refuses a pre-filled folder and leaves every entry as it was`, async () => {
      const dir = path.join(tmp.path, 'store');
      fs.mkdirSync(path.join(dir, 'theirs'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'theirs', 'data'), "not the harness's");
      fs.writeFileSync(path.join(dir, 'locks.db'), "someone else's database");
      const run = await chaos(dir, driver);
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, /already holds 2 entries the chaos harness did not create/);
      assert.deepEqual(fs.readdirSync(dir).sort(), ['locks.db', 'theirs']);
      assert.equal(fs.readFileSync(path.join(dir, 'theirs', 'data'), 'utf8'), "not the harness's");
      assert.equal(fs.readFileSync(path.join(dir, 'locks.db'), 'utf8'), "someone else's database");
    });

    it(`${driver}: runs in an empty folder it was given, then empties it and keeps the folder and its neighbours`, async () => {
      const dir = path.join(tmp.path, 'store');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(tmp.path, 'neighbour'), 'stays');
      const run = await chaos(dir, driver);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.match(run.stdout, /critical sections/);
      assert.ok(fs.existsSync(dir));
      assert.deepEqual(fs.readdirSync(dir), []);
      assert.equal(fs.readFileSync(path.join(tmp.path, 'neighbour'), 'utf8'), 'stays');
    });
  }

  it('file: a folder it created is removed whole', async () => {
    const dir = path.join(tmp.path, 'new', 'store');
    const run = await chaos(dir, 'file');
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.ok(!fs.existsSync(dir));
  });
});
