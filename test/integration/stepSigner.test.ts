import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockConfigurationError } from '../../src/core/errors';
import { signStep, stepSigner } from '../../src/core/stores/chainSignatures';
import { useTempDir } from '../helpers/tempDir';

/**
 * Which key a clone signs a signed chain's step with, read from its git configuration as git chooses
 * it (a real repository): SSH where gpg.format=ssh; OpenPGP where gpg.format=openpgp or is unset with a
 * user.signingkey, only where the container lists openpgpSigners; otherwise a configuration error that
 * says what to set — never an unsigned or unverifiable step.
 */
describe("a signed chain's step signer (git configuration)", () => {
  const temp = useTempDir('lockstep-step-signer');
  let clones = 0;
  const repo = (config: Record<string, string>): string => {
    const dir = path.join(temp.path, `clone-${++clones}`);
    execFileSync('git', ['init', '-q', dir]);
    for (const [name, value] of Object.entries(config)) execFileSync('git', ['-C', dir, 'config', name, value]);
    return dir;
  };
  const refused = async (dir: string, openpgp: boolean, says: RegExp) =>
    assert.rejects(
      stepSigner(dir, openpgp),
      (e: unknown) => e instanceof LockConfigurationError && e.setting === 'user.signingkey' && says.test(e.message),
    );

  it('gpg.format=ssh: the key file (~/ expanded), listing or not', async () => {
    const dir = repo({ 'gpg.format': 'ssh', 'user.signingkey': '~/.ssh/id_ed25519.pub' });
    const ssh = { kind: 'ssh', keyFile: path.join(os.homedir(), '.ssh/id_ed25519.pub'), program: 'ssh-keygen' };
    assert.deepEqual(await stepSigner(dir, false), ssh);
    assert.deepEqual(await stepSigner(dir, true), ssh);
  });

  it('gpg.format=openpgp, or unset, with a user.signingkey: the OpenPGP key where the container lists openpgpSigners', async () => {
    const fpr = 'B8A4193041E5A88D935CD2A5706C58730C1D967D';
    const gpg = { kind: 'openpgp', key: fpr, program: 'gpg' };
    assert.deepEqual(await stepSigner(repo({ 'gpg.format': 'openpgp', 'user.signingkey': fpr }), true), gpg);
    assert.deepEqual(await stepSigner(repo({ 'user.signingkey': fpr }), true), gpg);
  });

  it("the program is git's: gpg.openpgp.program, else gpg.program, else gpg; gpg.ssh.program, else ssh-keygen", async () => {
    const fpr = 'B8A4193041E5A88D935CD2A5706C58730C1D967D';
    const openpgp = (config: Record<string, string>) => stepSigner(repo({ 'user.signingkey': fpr, ...config }), true);
    assert.equal((await openpgp({ 'gpg.program': '/opt/gnupg/bin/gpg' })).program, '/opt/gnupg/bin/gpg');
    assert.equal((await openpgp({ 'gpg.program': '/opt/a/gpg', 'gpg.openpgp.program': '/opt/b/gpg2' })).program, '/opt/b/gpg2');
    const ssh = await stepSigner(
      repo({ 'gpg.format': 'ssh', 'user.signingkey': '/k.pub', 'gpg.ssh.program': '/opt/ssh/ssh-keygen' }),
      false,
    );
    assert.equal(ssh.program, '/opt/ssh/ssh-keygen');
  });

  it("a step is signed by the program git's configuration names (gpg.ssh.program), and the signature is ssh-keygen's", async () => {
    const keyFile = path.join(temp.path, 'key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const marker = path.join(temp.path, 'ran');
    const wrapper = path.join(temp.path, 'my-ssh-keygen');
    fs.writeFileSync(wrapper, `#!/bin/sh\necho "$@" > '${marker}'\nexec ssh-keygen "$@"\n`, { mode: 0o755 });
    const signer = await stepSigner(repo({ 'gpg.format': 'ssh', 'user.signingkey': keyFile, 'gpg.ssh.program': wrapper }), false);
    const signature = await signStep(signer, 'a step');
    assert.match(signature, /BEGIN SSH SIGNATURE/);
    assert.match(fs.readFileSync(marker, 'utf8'), /-Y sign/, 'the configured program made it');
  });

  it('a GPG key where the container lists no openpgpSigners, x509, or no key at all: refused, saying what to set', async () => {
    const fpr = 'B8A4193041E5A88D935CD2A5706C58730C1D967D';
    await refused(
      repo({ 'gpg.format': 'openpgp', 'user.signingkey': fpr }),
      false,
      /no SSH signing key .*signs only where the container lists openpgpSigners/,
    );
    await refused(repo({ 'gpg.format': 'x509', 'user.signingkey': 'cert' }), true, /no SSH or OpenPGP signing key/);
    await refused(repo({}), true, /no SSH or OpenPGP signing key .*gpg\.format openpgp/);
    await refused(repo({ 'gpg.format': 'ssh', 'user.signingkey': 'key::ssh-ed25519 AAAA' }), false, /gpg\.format ssh/);
  });
});
