import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * `lockstep run NAME -- CMD…` starts CMD through cross-spawn (src/cli/commands/run.ts). cross-spawn
 * decides by `process.platform` when it is loaded, so each case loads a fresh copy with the
 * platform it stands for and reads the command it would hand to Node's spawn (`_parse`).
 */
const requireHere = createRequire(__filename);
const CROSS_SPAWN_DIR = path.dirname(requireHere.resolve('cross-spawn'));

interface Parsed {
  readonly command: string;
  readonly args: readonly string[];
}
type Parse = (command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv }) => Parsed;

function crossSpawnOn(platform: NodeJS.Platform): Parse {
  const forget = () => {
    for (const key of Object.keys(requireHere.cache))
      if (key.startsWith(CROSS_SPAWN_DIR + path.sep) || key.includes(`${path.sep}which${path.sep}`)) delete requireHere.cache[key];
  };
  const real = Object.getOwnPropertyDescriptor(process, 'platform') as PropertyDescriptor;
  forget();
  Object.defineProperty(process, 'platform', { ...real, value: platform });
  try {
    const loaded = requireHere('cross-spawn') as { _parse: Parse };
    return loaded._parse;
  } finally {
    Object.defineProperty(process, 'platform', real);
    forget();
  }
}

describe('lockstep run: how CMD is started', () => {
  let bin: string;
  before(() => {
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'lockstep-run-spawn-'));
    // npm on Windows is a shim: npm.cmd, which only cmd.exe can run.
    fs.writeFileSync(path.join(bin, 'npm.cmd'), '@echo off\r\n', { mode: 0o755 });
  });
  after(() => fs.rmSync(bin, { recursive: true, force: true }));

  it('run.ts starts CMD through cross-spawn, not bare child_process.spawn', () => {
    const source = fs.readFileSync(path.join(__dirname, '../../src/cli/commands/run.ts'), 'utf8');
    assert.match(source, /^import crossSpawn from 'cross-spawn';$/m);
    assert.doesNotMatch(source, /from 'node:child_process'/);
  });

  it('on Windows: `npm test` goes to cmd.exe with its arguments escaped (a .cmd shim cannot be spawned directly)', () => {
    const parse = crossSpawnOn('win32');
    const parsed = parse('npm', ['test', 'a b'], { env: { PATH: bin, PATHEXT: '.COM;.EXE;.BAT;.CMD' } });
    assert.equal(parsed.command, 'cmd.exe');
    assert.deepEqual(parsed.args.slice(0, 3), ['/d', '/s', '/c']);
    assert.equal(parsed.args[3], '"npm ^"test^" ^"a^ b^""');
  });

  it('on Linux and macOS: CMD is spawned as it is, with no shell (exit codes and signals reach lockstep unchanged)', () => {
    for (const platform of ['linux', 'darwin'] as const) {
      const parsed = crossSpawnOn(platform)('npm', ['test', 'a b; rm -rf /'], { env: { PATH: bin } });
      assert.equal(parsed.command, 'npm', platform);
      assert.deepEqual(parsed.args, ['test', 'a b; rm -rf /'], platform);
    }
  });
});
