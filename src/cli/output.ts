import { escapeControls, exitCodeFor, LockError, LockErrorCode, LockNoPageError, LockTamperedPageError } from '../core/application';

/**
 * Everything the command line prints goes through here: short human lines on stdout by default,
 * or exactly one JSON object on stdout with `--json` (errors included). Never pass a token.
 * Text from the lock page may hold control characters an older client stored (a C1 CSI, a
 * right-to-left override): they reach no terminal raw — escaped for people, and `\uXXXX` escapes
 * inside JSON strings (the same values to a JSON reader).
 */
export class Output {
  private emitted = false;

  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {}

  /**
   * The command's result: `lines` for people, `data` for `--json` (merged under `ok: true`). A verdict that
   * fails the command (`doctor` unhealthy, `verify` failed) passes its exit code: `ok` is then false and the
   * object says `exitCode`, so a script that checks `ok` never reads a failure as a success.
   */
  result(lines: string | string[], data: Record<string, unknown> = {}, exitCode = 0): void {
    if (this.json) {
      this.writeJson(exitCode === 0 ? { ok: true, ...data } : { ok: false, exitCode, ...data });
    } else {
      for (const line of Array.isArray(lines) ? lines : [lines]) if (line !== '') this.stdout.write(`${escapeControls(line)}\n`);
    }
  }

  /** Progress or hints for people; silent under `--json`, always on stderr. */
  note(line: string): void {
    if (!this.json) this.stderr.write(`${escapeControls(line)}\n`);
  }

  /** A warning that does not change the command's outcome: on stderr, with `--json` too (stdout keeps its one object). */
  warn(line: string): void {
    this.stderr.write(`lockstep: warning: ${escapeControls(line)}\n`);
  }

  /** Reports an error and returns the exit code for it. */
  error(error: unknown): number {
    const exit = exitCodeFor(error);
    const typed = error instanceof LockError;
    const message = typed ? error.message : `Unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
    if (this.json) {
      const body: Record<string, unknown> = { code: typed ? error.code : 'internal', message };
      if (typed && 'reason' in error) body.reason = (error as { reason: unknown }).reason;
      if (typed && 'setting' in error && (error as { setting?: unknown }).setting !== undefined)
        body.setting = (error as { setting: unknown }).setting;
      if (error instanceof LockNoPageError) {
        body.page = error.page;
        if (error.mismatch.length > 0) Object.assign(body, { committed: error.committed, mismatch: error.mismatch });
      }
      if (error instanceof LockTamperedPageError) body.revision = error.revision;
      if (typed && error.code === LockErrorCode.Fenced) {
        body.currentGrant = (error as { currentGrant?: unknown }).currentGrant;
        body.presentedGrant = (error as { presentedGrant?: unknown }).presentedGrant;
      }
      this.writeJson({ ok: false, exitCode: exit, error: body });
    } else {
      this.stderr.write(`lockstep: ${escapeControls(message)}\n`);
    }
    return exit;
  }

  private writeJson(value: Record<string, unknown>): void {
    if (this.emitted) return; // one JSON object per call, whatever happens after
    this.emitted = true;
    this.stdout.write(`${escapeControls(JSON.stringify(value))}\n`);
  }
}
