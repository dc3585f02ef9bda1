/**
 * What `lockstep verify` decided, for the exit status, `--json` and the check's Markdown summary.
 * Identities on the page are declared by the writers, not proven, until signed history is on.
 */

export type VerifyOutcome = 'passed' | 'failed';

export interface PushVerdict {
  readonly kind: 'push';
  readonly outcome: VerifyOutcome;
  readonly branch: string;
  readonly old: string | null;
  readonly new: string | null;
  /** Why it failed, or what was verified, in one sentence each. */
  readonly reasons: readonly string[];
  readonly steps: readonly {
    readonly commit: string;
    readonly subject: string;
    readonly author: string;
    readonly announcedBy?: { readonly who: string; readonly grant: number; readonly at: number };
  }[];
  /** What the history reaches back to: the whole history (git driver) or the page's bounded audit trail. */
  readonly history: HistoryReach;
  /** `proven`: the page is signed and its whole history was verified; else identities are declared. */
  readonly identities?: Identities;
}

export interface MergeVerdict {
  readonly kind: 'merge';
  readonly outcome: VerifyOutcome;
  readonly branch: string;
  readonly head: string;
  readonly actor: string;
  readonly identity: string | null;
  readonly reasons: readonly string[];
  readonly identities?: Identities;
}

export interface HistoryReach {
  readonly driver: string;
  /**
   * `complete`: every transition ever (the git driver's ref history, back to the page's creation); `page`: the
   * page's own bounded audit, or a git history whose compaction kept only its newest 2,000 entries.
   */
  readonly reach: 'complete' | 'page';
  /** Whether the page's audit has dropped old lines (only for `page`). */
  readonly trimmed: boolean;
}

export type Verdict = PushVerdict | MergeVerdict;

export type Identities = 'declared' | 'proven';

/** What a signed page's verified history proves. */
export const PROVEN_IDENTITIES =
  "Identities on the lock page are proven: every step of its history was verified against the allowed signers of the protected branch (git's SSH signatures).";

function identitiesNote(verdict: Verdict): string {
  return verdict.identities === 'proven' ? PROVEN_IDENTITIES : DECLARED_IDENTITIES;
}

/** The caveat every summary carries until the page's history is signed. */
export const DECLARED_IDENTITIES =
  'Identities on the lock page are declared by the clients that wrote it, not proven: until signed history is on, a teammate who can write the page could write announcements in another name.';

/** The summary's table stays short (a check's page has a size limit); `--json` has every step. */
const MAX_TABLE_ROWS = 50;

function short(commit: string): string {
  return commit.slice(0, 12);
}

function cell(text: string): string {
  return text
    .replace(/[|\\`*_<>[\]]/g, c => `\\${c}`)
    .replace(/[\r\n]+/g, ' ')
    .slice(0, 120);
}

/** The check's page: a short Markdown summary (GITHUB_STEP_SUMMARY, GitLab's job log). */
export function verdictMarkdown(verdict: Verdict): string {
  const mark = verdict.outcome === 'passed' ? '✅' : '❌';
  const lines: string[] = [];
  if (verdict.kind === 'push') {
    const range = `${verdict.old === null ? '(new branch)' : short(verdict.old)}..${verdict.new === null ? '(deleted)' : short(verdict.new)}`;
    lines.push(`### ${mark} Lockstep verify: push to \`${cell(verdict.branch)}\` ${range} ${verdict.outcome}`, '');
    for (const reason of verdict.reasons) lines.push(`- ${cell(reason)}`);
    if (verdict.steps.length > 0) {
      lines.push('', '| commit | author | subject | announced by |', '| --- | --- | --- | --- |');
      // Unannounced steps first, so that the page's bounded table always shows them.
      const shown = [...verdict.steps.filter(s => !s.announcedBy), ...verdict.steps.filter(s => s.announcedBy)].slice(0, MAX_TABLE_ROWS);
      for (const s of shown) {
        const by = s.announcedBy ? `${cell(s.announcedBy.who)} (grant #${s.announcedBy.grant})` : '**not announced**';
        lines.push(`| ${short(s.commit)} | ${cell(s.author)} | ${cell(s.subject)} | ${by} |`);
      }
      if (verdict.steps.length > shown.length)
        lines.push('', `… and ${verdict.steps.length - shown.length} more commits (\`--json\` lists them all).`);
    }
    const h = verdict.history;
    lines.push(
      '',
      h.reach === 'complete'
        ? `History read: every transition of the page (${h.driver} driver).`
        : `History read: the page's own audit trail (${h.driver} driver), which keeps the newest transitions only${h.trimmed ? ' and has dropped older ones' : ''}; run this check on every push, while its announcement is on the page.`,
    );
  } else {
    lines.push(
      `### ${mark} Lockstep verify: request by \`${cell(verdict.actor)}\` into \`${cell(verdict.branch)}\` ${verdict.outcome}`,
      '',
    );
    for (const reason of verdict.reasons) lines.push(`- ${cell(reason)}`);
  }
  lines.push('', `_${identitiesNote(verdict)}_`);
  return `${lines.join('\n')}\n`;
}

/** The same verdict as plain text lines (the command's own output). */
export function verdictText(verdict: Verdict): string {
  const head =
    verdict.kind === 'push'
      ? `lockstep verify: push to ${verdict.branch} ${verdict.outcome}.`
      : `lockstep verify: request by ${verdict.actor} into ${verdict.branch} ${verdict.outcome}.`;
  const steps =
    verdict.kind === 'push'
      ? verdict.steps.map(
          s =>
            `  ${short(s.commit)} ${s.announcedBy ? `announced by ${s.announcedBy.who} (grant #${s.announcedBy.grant})` : 'NOT ANNOUNCED'} — ${s.author}: ${s.subject}`,
        )
      : [];
  return [head, ...verdict.reasons.map(r => `  ${r}`), ...steps, `  Note: ${identitiesNote(verdict)}`].join('\n');
}
