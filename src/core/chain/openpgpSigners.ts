import { LockConfigurationError } from '../errors';
import type { StepSignature } from './signedStep';

/**
 * The OpenPGP half of a signed lock page's listing (`openpgpSigners` and `openpgpKeys` in
 * `.lockstep.json`, docs/protocol.md "OpenPGP (GPG) signatures"): which primary key fingerprint
 * signs for which identity, and how git's verdict on a commit's signature becomes a step's signer.
 * ssh-keygen's allowed signers format has no OpenPGP key type, so this list stands beside it. Pure:
 * texts and git's fields in, a map or a signature out.
 */

/** The largest `openpgpSigners` or `openpgpKeys` file read (public keys only). */
export const MAX_OPENPGP_FILE_BYTES = 1024 * 1024;

/** The two committed files, as the protected branch has them. */
export interface OpenpgpListingText {
  /** Lines `<identity> <fingerprint>`. */
  readonly signers: string;
  /** The armored public keys (`gpg --armor --export FPR …`). */
  readonly keys: string;
}

/** Primary key fingerprint (upper-case hex, as git's `%GP` prints it) → the identity it signs for. */
export type OpenpgpSigners = ReadonlyMap<string, string>;

/** What git's log prints of a commit's signature: `%G?`, `%GS` and `%GP` (empty for SSH). */
export interface GitSignatureFields {
  readonly status: string;
  readonly signer: string;
  readonly primaryKey: string;
}

const FINGERPRINT = /^(?:[0-9A-F]{40}|[0-9A-F]{64})$/;

/**
 * Parses an `openpgpSigners` file: one `<identity> <fingerprint>` a line (the identity may hold
 * spaces; the fingerprint is the last word: the primary key's full fingerprint, 40 hex for v4 keys,
 * 64 for v5, never a short key id or a user id), blank lines and `#` comments skipped. A fingerprint
 * listed for two identities, or a line that is not one, is a configuration error naming the line.
 */
export function parseOpenpgpSigners(text: string, where: string): OpenpgpSigners {
  const signers = new Map<string, string>();
  const bad = (n: number, what: string): never => {
    throw new LockConfigurationError(
      `${where} line ${n} ${what}; each line is an identity, a space, then the primary key's full fingerprint (gpg --with-colons --fingerprint: 40 hex digits).`,
      { setting: 'openpgpSigners' },
    );
  };
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const space = line.search(/\s\S+$/);
    if (space <= 0) bad(i + 1, 'has no identity and fingerprint');
    const identity = line.slice(0, space).trim();
    const fingerprint = line
      .slice(space + 1)
      .replace(/^0x/i, '')
      .toUpperCase();
    if (!FINGERPRINT.test(fingerprint)) bad(i + 1, 'does not end with a full key fingerprint');
    const listed = signers.get(fingerprint);
    if (listed !== undefined && listed !== identity) bad(i + 1, `lists a key already listed for ${listed}`);
    signers.set(fingerprint, identity);
  }
  return signers;
}

/** A listing read: who signs with which key, and what a reader's own keyring is filled with (openpgpKeyring.ts). */
export interface OpenpgpListing {
  readonly signers: OpenpgpSigners;
  readonly keyring: { readonly keys: string; readonly fingerprints: readonly string[] };
}

/** The listing's two texts parsed once: the signers map, and the keys and fingerprints a reader's keyring holds. */
export function readOpenpgpListing(text: OpenpgpListingText): OpenpgpListing {
  const signers = parseOpenpgpSigners(text.signers, 'The openpgpSigners file');
  return { signers, keyring: { keys: text.keys, fingerprints: [...signers.keys()] } };
}

/**
 * The step's signature as the chain judges it (signedStep.ts `checkSigner`). An SSH signature
 * (`%GP` empty: git prints a primary key fingerprint for OpenPGP only) keeps the principal the
 * allowed signers list gives its key (`%GS`). An OpenPGP one is signed for the identity the listing
 * gives its primary key (`%GP`), or for no one; its user id (`%GS`, which its owner writes freely) is
 * never read.
 */
export function stepSignature(fields: GitSignatureFields, listing: OpenpgpSigners | undefined): StepSignature {
  if (fields.primaryKey === '') return { status: fields.status, signer: fields.signer };
  return { status: fields.status, signer: listing?.get(fields.primaryKey.toUpperCase()) ?? '', kind: 'openpgp' };
}

/**
 * What gpg's `--status-fd` lines of one `gpg --verify` say of a detached signature, as git reads them
 * for `%G?` and `%GP` (git's gpg-interface.c): `GOODSIG` G (U unless the key's validity is at least
 * marginal: `TRUST_MARGINAL`, `TRUST_FULLY`, `TRUST_ULTIMATE`), `BADSIG` B, `EXPSIG` X, `EXPKEYSIG` Y,
 * `REVKEYSIG` R, `ERRSIG` E (no public key in the reader's keyring, an unknown algorithm); more than
 * one signature, or none gpg could judge, E. The primary key's fingerprint is `VALIDSIG`'s tenth field,
 * the one `openpgpSigners` lists. The signer's user id is never read.
 */
export function gpgVerifyFields(status: string): GitSignatureFields {
  const verdicts: Record<string, string> = { GOODSIG: 'G', BADSIG: 'B', EXPSIG: 'X', EXPKEYSIG: 'Y', REVKEYSIG: 'R', ERRSIG: 'E' };
  let result: string | undefined;
  let seen = 0;
  let trusted = false;
  let primaryKey = '';
  for (const line of status.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0] !== '[GNUPG:]') continue;
    const [keyword, ...fields] = words.slice(1);
    if (keyword !== undefined && keyword in verdicts) {
      seen++;
      result = verdicts[keyword];
    } else if (keyword === 'VALIDSIG') primaryKey = (fields[9] ?? '').toUpperCase();
    else if (keyword === 'TRUST_MARGINAL' || keyword === 'TRUST_FULLY' || keyword === 'TRUST_ULTIMATE') trusted = true;
  }
  if (result === undefined || seen !== 1) return { status: 'E', signer: '', primaryKey };
  return { status: result === 'G' && !trusted ? 'U' : result, signer: '', primaryKey };
}
