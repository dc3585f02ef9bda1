import { spawn, type SpawnOptions } from 'node:child_process';

/** What a signing program (gpg, ssh-keygen) answered: its exit code and its output as text. */
export interface SignerRan {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a signing program with `input` on its standard input and collects what it prints. Rejects
 * only when the program cannot be started; its exit code and output are the caller's to judge.
 * The input goes through the pipe, never argv; a program that exits before reading it is no error.
 */
export function runSigner(
  program: string,
  args: readonly string[],
  input: string,
  options: Pick<SpawnOptions, 'env' | 'timeout'> = {},
): Promise<SignerRan> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', code =>
      resolve({ code: code ?? 1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }),
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(input);
  });
}
