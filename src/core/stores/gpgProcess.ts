import { spawn } from 'node:child_process';

/**
 * One gpg process: `args` after `--batch --no-tty` (none when `interactive`: the signer's own gpg may
 * ask its agent for a passphrase), `input` on standard input, the environment's own `GNUPGHOME`
 * unless `home` names another, stopped after `timeoutMs`. Rejects only when gpg cannot be started;
 * its exit code and output are the caller's to judge. Nothing of a key reaches argv but its name.
 */

/** How long one gpg that asks nobody anything may run. */
export const GPG_TIMEOUT_MS = 30_000;

export interface GpgRan {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runGpg(
  args: readonly string[],
  input: string,
  options: { readonly home?: string; readonly interactive?: boolean; readonly timeoutMs: number },
): Promise<GpgRan> {
  return new Promise((resolve, reject) => {
    const child = spawn('gpg', [...(options.interactive ? [] : ['--batch', '--no-tty']), ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.home === undefined ? process.env : { ...process.env, GNUPGHOME: options.home },
      timeout: options.timeoutMs,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', code =>
      resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin.on('error', () => undefined); // gpg may exit before reading its input
    child.stdin.end(input);
  });
}
