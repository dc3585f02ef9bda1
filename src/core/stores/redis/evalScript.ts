import { createHash } from 'node:crypto';

/** A Lua script with its SHA-1, computed once when the module loads. */
export interface LuaScript {
  readonly source: string;
  readonly sha1: string;
  readonly keyCount: number;
}

export function defineScript(source: string, keyCount: number): LuaScript {
  return { source, keyCount, sha1: createHash('sha1').update(source, 'utf8').digest('hex') };
}

/** The narrowest client a script needs: an ioredis client, or one that adds `WAIT` (replicaWait.ts). */
export interface ScriptClient {
  evalsha(sha1: string, keyCount: number, ...args: (string | number)[]): Promise<unknown>;
  eval(source: string, keyCount: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * Runs `script` by its hash, sending the source only when the server does not know it yet
 * (`NOSCRIPT`: first use on this server, or after a restart or `SCRIPT FLUSH`). `EVAL` also caches
 * the script, so each connection pays for the source at most once per server lifetime.
 */
export function evalScript(client: ScriptClient, script: LuaScript, args: readonly (string | number)[]): Promise<unknown> {
  // Plain promise chaining rather than async/await: this is the hot path of every operation.
  return client.evalsha(script.sha1, script.keyCount, ...args).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(script.source, script.keyCount, ...args);
  });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
