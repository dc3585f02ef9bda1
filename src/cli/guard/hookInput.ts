/** Parsing of what git hands its hooks on standard input. Pure. */

export const ZERO_SHA = /^0+$/;

export interface PushedRef {
  readonly localRef: string;
  readonly localSha: string;
  readonly remoteRef: string;
  readonly remoteSha: string;
}

/** pre-push: `<local ref> SP <local sha> SP <remote ref> SP <remote sha> LF` per ref. */
export function parsePrePush(input: string): PushedRef[] {
  return input
    .split('\n')
    .map(l => l.trim())
    .filter(Boolean)
    .map(line => {
      const [localRef, localSha, remoteRef, remoteSha] = line.split(/\s+/);
      return { localRef, localSha, remoteRef, remoteSha };
    })
    .filter(r => r.remoteRef !== undefined);
}

export interface ReceivedRef {
  readonly oldSha: string;
  readonly newSha: string;
  readonly ref: string;
}

/** pre-receive: `<old sha> SP <new sha> SP <ref name> LF` per ref. */
export function parsePreReceive(input: string): ReceivedRef[] {
  return input
    .split('\n')
    .map(l => l.trim())
    .filter(Boolean)
    .map(line => {
      const [oldSha, newSha, ref] = line.split(/\s+/);
      return { oldSha, newSha, ref };
    })
    .filter(r => r.ref !== undefined);
}

export async function readStdin(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if ((stream as { isTTY?: boolean }).isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}
