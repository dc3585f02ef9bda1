import * as assert from 'node:assert/strict';
import { gpgVerifyFields, parseOpenpgpSigners, stepSignature } from '../../src/core/chain/openpgpSigners';
import { checkSignedSnapshot, checkSigner } from '../../src/core/chain/signedStep';
import { LockConfigurationError } from '../../src/core/errors';
import { acquireAs, fresh, LEAD, OP, SETTINGS, ANA, at } from '../helpers/lockRecordFixture';

/**
 * The OpenPGP listing (`openpgpSigners`): which primary key fingerprint signs for which identity, and how
 * git's `%G?`/`%GS`/`%GP` become a step's signer. A GPG step is proven only by `G` and a listed
 * fingerprint of its own identity; its user id is never read; an expired key (`Y`) never proves one.
 * Real gpg and git run in test/integration/openpgpSignedHistory.test.ts.
 */

const ALICE_FPR = 'B8A4193041E5A88D935CD2A5706C58730C1D967D';
const BOB_FPR = '0123456789ABCDEF0123456789ABCDEF01234567';

describe('OpenPGP signers listing', () => {
  const listing = parseOpenpgpSigners(
    `# OpenPGP signers\n${LEAD} ${ALICE_FPR.toLowerCase()}\n\n${ANA} 0x${BOB_FPR}\nOps Team ${'A'.repeat(64)}\n`,
    'openpgp_signers',
  );

  it('reads identity and full fingerprint per line (upper-cased, 0x dropped, spaces in an identity kept, v5 length too)', () => {
    assert.deepEqual(
      [...listing.entries()],
      [
        [ALICE_FPR, LEAD],
        [BOB_FPR, ANA],
        ['A'.repeat(64), 'Ops Team'],
      ],
    );
  });

  it('refuses a short key id, a user id, a missing identity, and a key listed for two identities, naming the line', () => {
    for (const [text, line] of [
      [`${LEAD} 706C58730C1D967D\n`, 1],
      [`${LEAD} ${LEAD}\n`, 1],
      [`\n${ALICE_FPR}\n`, 2],
      [`${LEAD} ${ALICE_FPR}\n${ANA} ${ALICE_FPR}\n`, 2],
    ] as const) {
      assert.throws(
        () => parseOpenpgpSigners(text, 'openpgp_signers'),
        (e: unknown) => e instanceof LockConfigurationError && e.setting === 'openpgpSigners' && e.message.includes(`line ${line} `),
        text,
      );
    }
  });

  it('an SSH signature (no %GP) keeps its principal; an OpenPGP one signs for the listed identity, never its user id', () => {
    assert.deepEqual(stepSignature({ status: 'G', signer: LEAD, primaryKey: '' }, listing), { status: 'G', signer: LEAD });
    assert.deepEqual(stepSignature({ status: 'G', signer: ANA, primaryKey: ALICE_FPR }, listing), {
      status: 'G',
      signer: LEAD,
      kind: 'openpgp',
    });
    assert.equal(stepSignature({ status: 'G', signer: LEAD, primaryKey: 'C'.repeat(40) }, listing).signer, '', 'unlisted key');
    assert.equal(stepSignature({ status: 'G', signer: LEAD, primaryKey: ALICE_FPR }, undefined).signer, '', 'no listing');
  });

  it('checkSigner: G by a listed key of the identity proves it; another identity, an unlisted key and every other status do not', () => {
    const gpg = (status: string, primaryKey: string) => stepSignature({ status, signer: LEAD, primaryKey }, listing);
    assert.equal(checkSigner(gpg('G', ALICE_FPR), LEAD), undefined);
    assert.match(checkSigner(gpg('G', BOB_FPR), LEAD) ?? '', new RegExp(`openpgpSigners gives ${ANA}, but its audit line acts as ${LEAD}`));
    assert.match(checkSigner(gpg('G', 'C'.repeat(40)), LEAD) ?? '', /OpenPGP key openpgpSigners does not list/);
    assert.match(checkSigner(gpg('Y', ALICE_FPR), LEAD) ?? '', /expired/);
    for (const status of ['X', 'R', 'E', 'B', 'U'])
      assert.match(checkSigner(gpg(status, ALICE_FPR), LEAD) ?? '', /does not verify/, status);
    assert.match(checkSigner(gpg('N', ''), LEAD) ?? '', /not signed/);
  });

  it("a compaction signed by the operator's listed GPG key is proven; by an unlisted one it is not", () => {
    const ops = parseOpenpgpSigners(`${OP} ${BOB_FPR}\n`, 'openpgp_signers');
    const held = acquireAs(fresh(), LEAD, at(0)).record;
    assert.equal(checkSignedSnapshot(held, stepSignature({ status: 'G', signer: '', primaryKey: BOB_FPR }, ops), SETTINGS), undefined);
    assert.notEqual(checkSignedSnapshot(held, stepSignature({ status: 'G', signer: OP, primaryKey: ALICE_FPR }, ops), SETTINGS), undefined);
  });

  it("gpg's --status-fd of a verify, read as git reads it: good and valid G with the primary key, untrusted U, the rest by keyword", () => {
    const sub = 'E1A1B2C3D4E5F60718293A4B5C6D7E8F90A1B2C3';
    const good = (trust: string) =>
      '[GNUPG:] NEWSIG\n[GNUPG:] KEY_CONSIDERED X 0\n[GNUPG:] SIG_ID abc 2026-12-02 1764667200\n' +
      '[GNUPG:] GOODSIG 706C58730C1D967D alice <alice@example.com>\n' +
      `[GNUPG:] VALIDSIG ${sub} 2026-12-02 1764667200 0 4 0 22 10 00 ${ALICE_FPR.toLowerCase()}\n${trust}`;
    assert.deepEqual(gpgVerifyFields(good('[GNUPG:] TRUST_ULTIMATE 0 pgp\n')), { status: 'G', signer: '', primaryKey: ALICE_FPR });
    assert.equal(gpgVerifyFields(good('[GNUPG:] TRUST_FULLY 0 pgp\n')).status, 'G');
    assert.equal(gpgVerifyFields(good('[GNUPG:] TRUST_UNDEFINED 0 pgp\n')).status, 'U', 'a key the keyring does not vouch for');
    assert.equal(gpgVerifyFields(good('')).status, 'U', 'no trust line');
    for (const [keyword, status] of [
      ['BADSIG 706C58730C1D967D alice', 'B'],
      ['EXPKEYSIG 706C58730C1D967D alice', 'Y'],
      ['EXPSIG 706C58730C1D967D alice', 'X'],
      ['REVKEYSIG 706C58730C1D967D alice', 'R'],
      ['ERRSIG 706C58730C1D967D 22 10 00 1764667200 9 -', 'E'],
    ] as const) {
      assert.equal(gpgVerifyFields(`[GNUPG:] NEWSIG\n[GNUPG:] ${keyword}\n`).status, status, keyword);
    }
    assert.equal(gpgVerifyFields('[GNUPG:] NODATA 1\n').status, 'E', 'no signature gpg could read');
    assert.equal(gpgVerifyFields('').status, 'E');
    assert.equal(
      gpgVerifyFields(`${good('[GNUPG:] TRUST_ULTIMATE 0 pgp\n')}[GNUPG:] GOODSIG 0123456789ABCDEF bob\n`).status,
      'E',
      'two signatures: one signer is asked for',
    );
    assert.equal(gpgVerifyFields('gpg: GOODSIG forged on stderr\n').status, 'E', 'only status lines count');
  });
});
