import type Redis from 'ioredis';
import { LockStorageError } from '../../errors';
import { packedJson, unpackPage } from '../packedPage';
import type { CasResult, VersionedRecord } from '../store';
import { defineScript, evalScript, type ScriptClient } from './evalScript';

/**
 * The container record in Redis: a hash holding the JSON text `v` and an integer revision `rev`.
 * A read is one HMGET; a write is one script that checks the revision, writes, bumps the revision
 * and announces the change on the record's channel, all atomically.
 */

/** Records are small; anything larger than this is refused rather than stored. */
const MAX_RECORD_BYTES = 1024 * 1024;

// KEYS[1] record hash; ARGV[1] expected revision ('' = no record yet), ARGV[2] JSON text, ARGV[3] channel.
const COMPARE_AND_SWAP = defineScript(
  `
local current = redis.call('HGET', KEYS[1], 'rev')
-- Write only against the revision the caller read (none, or exactly that one).
if ARGV[1] == '' then
  if current then return 0 end
elseif current ~= ARGV[1] then
  return 0
end
-- Write, move to the next revision, and tell watchers (the message carries no data, only a hint).
local revision = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'v', ARGV[2])
redis.call('PUBLISH', ARGV[3], revision)
return revision
`,
  1,
);

export async function readRecord(client: Pick<Redis, 'hmget'>, recordKey: string): Promise<VersionedRecord | null> {
  const [text, revision] = await client.hmget(recordKey, 'v', 'rev');
  if (text === null && revision === null) return null;
  if (text === null || revision === null || !/^[1-9]\d*$/.test(revision)) throw damaged();
  try {
    return { value: unpackPage(JSON.parse(text), 'redis'), revision };
  } catch (error) {
    if (error instanceof LockStorageError) throw error;
    throw damaged();
  }
}

export async function compareAndSwapRecord(
  client: ScriptClient,
  recordKey: string,
  channel: string,
  expectedRevision: string | null,
  next: unknown,
): Promise<CasResult> {
  const text = packedJson(next, 'redis');
  if (text === undefined || Buffer.byteLength(text) > MAX_RECORD_BYTES) {
    throw new LockStorageError(
      'redis',
      `A record must be JSON of at most ${MAX_RECORD_BYTES} bytes; this write was refused and nothing was stored.`,
    );
  }
  const revision = Number(await evalScript(client, COMPARE_AND_SWAP, [recordKey, expectedRevision ?? '', text, channel]));
  return revision > 0 ? { ok: true, revision: String(revision) } : { ok: false };
}

function damaged(): LockStorageError {
  return new LockStorageError(
    'redis',
    'A record stored in Redis is damaged, so it cannot be read. Stop the processes using this prefix and remove its keys (the pattern <prefix>:*), or restore Redis from a backup.',
  );
}
