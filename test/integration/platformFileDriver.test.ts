import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createGitFixture, expectOk, type GitFixture, type TeamMember } from '../helpers/gitFixture';
import { makeTempDir, removeTempDir, walk } from '../helpers/tempDir';

/**
 * Issue #29, the file driver on Windows: small records are published as the target of a symbolic
 * link, and Node on win32 rewrites every `/` of a relative link target to `\`
 * (lib/internal/fs/utils.js, preprocessSymlinkDestination). Simulated here by preloading that one
 * rewrite into every lockstep process: a note naming a path used to come back as a damaged record.
 */
const WINDOWS_SYMLINK = `'use strict';
const fs = require('node:fs');
const asWindows = target => String(target).replace(/\\//g, '\\\\');
const { symlinkSync, symlink } = fs;
const promised = fs.promises.symlink;
fs.symlinkSync = (target, file, type) => {
  fs.appendFileSync(process.env.LOCKSTEP_TEST_REWRITES, 'x');
  return symlinkSync(asWindows(target), file, type);
};
fs.symlink = (target, file, ...rest) => symlink(asWindows(target), file, ...rest);
fs.promises.symlink = (target, file, type) => promised(asWindows(target), file, type);
`;

describe('on Windows: the file driver with symbolic link targets rewritten as Node on win32 does', function () {
  this.timeout(120_000);
  let preloads: string;
  let rewrites: string;
  let team: GitFixture;
  let lead: TeamMember, ana: TeamMember;

  before(async () => {
    preloads = makeTempDir('lockstep-win-preload');
    const preload = path.join(preloads, 'windowsSymlink.cjs');
    rewrites = path.join(preloads, 'rewrites');
    fs.writeFileSync(preload, WINDOWS_SYMLINK);
    fs.writeFileSync(rewrites, '');
    team = await createGitFixture({
      members: ['lead', 'ana'],
      operators: [],
      env: { NODE_OPTIONS: `--require=${preload}`, LOCKSTEP_TEST_REWRITES: rewrites },
    });
    [lead, ana] = team.members;
  });
  after(() => {
    team?.dispose();
    if (preloads) removeTempDir(preloads);
  });

  it('petition --note "need to fix src/app.ts" and status succeed, and the note reads back whole', async () => {
    expectOk(await team.cli(lead, ['acquire']), 'acquire');
    const petitioned = expectOk(await team.cli(ana, ['petition', '--note', 'need to fix src/app.ts']), 'petition');
    assert.equal(petitioned.position, 1);
    const seen = expectOk(await team.cli(lead, ['status']), 'status');
    assert.equal(seen.queue[0].note, 'need to fix src/app.ts');
    assert.equal(expectOk(await team.cli(ana, ['status']), 'status').state, 'queued');
    assert.ok(fs.readFileSync(rewrites, 'utf8').length > 0, 'the records were written through the rewritten symlink');
  });

  it('no link target in the store holds a `/` or a `\\` (nothing for Windows to rewrite)', () => {
    const links = walk(team.store).files.filter(f => fs.lstatSync(f).isSymbolicLink());
    assert.ok(links.length > 0, 'small records are published as links');
    for (const link of links) assert.doesNotMatch(fs.readlinkSync(link), /[/\\]/);
  });
});
