import * as vscode from 'vscode';
import { LockError } from '../core/application';

const ORDER = ['trace', 'debug', 'info', 'warn', 'error'] as const;
type Level = (typeof ORDER)[number];
const RECENT_LINES = 200;

/**
 * The "Lockstep" log channel. Lines carry identities, grants and error codes; never tokens
 * (the extension never holds one: they stay inside core and the clone's session file).
 */
export class Log implements vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;
  private minimum: Level = 'info';
  /** The last lines written, for the extension's API (tests and diagnostics read the log without the UI). */
  private readonly recent: string[] = [];

  constructor() {
    this.channel = vscode.window.createOutputChannel('Lockstep', { log: true });
  }

  setLevel(level: Level): void {
    this.minimum = level;
  }

  trace(message: string): void {
    if (this.enabled('trace')) {
      this.keep('trace', message);
      this.channel.trace(message);
    }
  }
  debug(message: string): void {
    if (this.enabled('debug')) {
      this.keep('debug', message);
      this.channel.debug(message);
    }
  }
  info(message: string): void {
    if (this.enabled('info')) {
      this.keep('info', message);
      this.channel.info(message);
    }
  }
  warn(message: string): void {
    if (this.enabled('warn')) {
      this.keep('warn', message);
      this.channel.warn(message);
    }
  }

  /** Typed errors are logged by code and message (both free of tokens by construction). */
  error(context: string, error: unknown): void {
    const text = error instanceof LockError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    this.keep('error', `${context}: ${text}`);
    this.channel.error(`${context}: ${text}`);
  }

  /** Up to the last RECENT_LINES lines written, oldest first, as `[level] message`. */
  lines(): readonly string[] {
    return [...this.recent];
  }

  show(): void {
    this.channel.show(true);
  }
  dispose(): void {
    this.channel.dispose();
  }

  private keep(level: Level, message: string): void {
    this.recent.push(`[${level}] ${message}`);
    if (this.recent.length > RECENT_LINES) this.recent.shift();
  }

  private enabled(level: Level): boolean {
    return ORDER.indexOf(level) >= ORDER.indexOf(this.minimum);
  }
}
