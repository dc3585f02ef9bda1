import { LockBackendError, LockError, LockStorageError } from '../../errors';

/**
 * Translates whatever ioredis throws into Lockstep's typed errors, once, at the driver's edge.
 *
 * ioredis errors can carry the command and its arguments (raw keys), and connection errors the
 * address; so the translated error keeps only a short, safe cause (an error code such as
 * `ECONNREFUSED` or `WRONGTYPE`). Nothing here ever sees the URL, so no credential can leak.
 */
export function translateRedisError(error: unknown, timeouts: { connectTimeoutMs: number; commandTimeoutMs: number }): LockError {
  if (error instanceof LockError) return error;
  const { kind, code } = classify(error);
  const cause = new Error(`redis: ${code}`);
  switch (kind) {
    case 'command-timeout':
      return new LockBackendError(
        'redis',
        `Redis did not answer within the command timeout (${timeouts.commandTimeoutMs} ms). Check that the server is healthy (in a program using the library, commandTimeoutMs raises the timeout).`,
        { cause },
      );
    case 'connect-timeout':
      return new LockBackendError(
        'redis',
        `Redis could not be reached within the connect timeout (${timeouts.connectTimeoutMs} ms). Check that it is running and that LOCKSTEP_REDIS_URL (or the redisUrl setting) points at it (in a program using the library, connectTimeoutMs raises the timeout).`,
        { cause },
      );
    case 'reply':
      if (code === 'WRONGTYPE') {
        return new LockStorageError(
          'redis',
          'A Redis key under this prefix holds a value Lockstep did not write; something else uses the same prefix. Give Lockstep a prefix of its own (LOCKSTEP_PREFIX or the prefix setting).',
          { cause },
        );
      }
      if (code === 'NOAUTH' || code === 'WRONGPASS' || code === 'NOPERM') {
        return new LockBackendError(
          'redis',
          `Redis refused Lockstep's credentials or permissions (${code}). Check the user and password in LOCKSTEP_REDIS_URL (or the redisUrl setting) and that its ACL allows the commands Lockstep uses (EVALSHA, EVAL, HMGET, SUBSCRIBE, PING, INFO, CLIENT SETNAME).`,
          { cause, retryable: false },
        );
      }
      return new LockBackendError('redis', `Redis refused the operation (${code}). Check the server's state and logs, then try again.`, {
        cause,
      });
    case 'unreachable':
      return new LockBackendError(
        'redis',
        `Redis is unreachable (${code}). Check that it is running and that LOCKSTEP_REDIS_URL (or the redisUrl setting) points at it; Lockstep does not switch to another driver.`,
        { cause },
      );
  }
}

type Kind = 'command-timeout' | 'connect-timeout' | 'reply' | 'unreachable';

/** A short, credential-free code for an ioredis error, and what kind of failure it is. */
function classify(error: unknown): { kind: Kind; code: string } {
  if (!(error instanceof Error)) return { kind: 'unreachable', code: 'UNKNOWN' };
  const message = error.message;
  if (message === 'Command timed out') return { kind: 'command-timeout', code: 'TIMEOUT' };
  if (error.name === 'ReplyError') {
    // Redis error replies start with an upper-case code: `WRONGTYPE Operation against ...`.
    return { kind: 'reply', code: /^[A-Z]+/.exec(message)?.[0] ?? 'ERR' };
  }
  // Sentinel and Cluster clients say so in words (their messages carry no address or credential, but are not kept).
  if (message.startsWith('All sentinels are unreachable')) return { kind: 'unreachable', code: 'SENTINELS-UNREACHABLE' };
  if (/^(None of startup nodes is available|Failed to refresh slots cache)/.test(message))
    return { kind: 'unreachable', code: 'CLUSTER-UNREACHABLE' };
  if (message.startsWith("Cluster isn't ready")) return { kind: 'unreachable', code: 'CLUSTER-NOT-READY' };
  const sysCode = (error as { code?: unknown }).code;
  if (sysCode === 'ETIMEDOUT') return { kind: 'connect-timeout', code: sysCode };
  if (typeof sysCode === 'string' && /^E[A-Z]+$/.test(sysCode)) return { kind: 'unreachable', code: sysCode };
  return { kind: 'unreachable', code: 'DISCONNECTED' };
}
