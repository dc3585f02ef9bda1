import { runSigner, type SignerRan } from './signerProcess';

/**
 * One gpg process: `args` after `--batch --no-tty` (none when `interactive`: the signer's own gpg may
 * ask its agent for a passphrase), `input` on standard input, the environment's own `GNUPGHOME`
 * unless `home` names another, stopped after `timeoutMs`; `program` the signer's own gpg (default gpg). Rejects only when gpg cannot be started;
 * its exit code and output are the caller's to judge. Nothing of a key reaches argv but its name.
 */

/** How long one gpg that asks nobody anything may run. */
export const GPG_TIMEOUT_MS = 30_000;

export type GpgRan = SignerRan;

export function runGpg(
  args: readonly string[],
  input: string,
  options: { readonly home?: string; readonly interactive?: boolean; readonly timeoutMs: number; readonly program?: string },
): Promise<GpgRan> {
  return runSigner(options.program ?? 'gpg', [...(options.interactive ? [] : ['--batch', '--no-tty']), ...args], input, {
    env: options.home === undefined ? process.env : { ...process.env, GNUPGHOME: options.home },
    timeout: options.timeoutMs,
  });
}
