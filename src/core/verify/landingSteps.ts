import type { AuditLine, Landing } from '../lockRecord';
import { parseLandingDetail } from '../lockRecord';

/**
 * The pure part of `lockstep verify --push`: which first-parent steps of a protected branch were
 * announced by the live holder before they landed. Git supplies the steps and, for each
 * announcement, the commits it brings; this decides.
 */

/** A `land` line of the page's history: who announced which landing, under which grant, when. */
export interface Announcement {
  readonly who: string;
  readonly grant: number;
  readonly at: number;
  readonly landing: Landing;
}

/** The landing announcements among audit lines (done `land` lines with a well-formed detail), in the order given. */
export function announcementsIn(lines: readonly AuditLine[]): Announcement[] {
  const out: Announcement[] = [];
  for (const line of lines) {
    if (line.action !== 'land' || line.outcome !== 'done') continue;
    const landing = parseLandingDetail(line.detail);
    if (landing !== undefined) out.push({ who: line.who, grant: line.grant, at: line.at, landing });
  }
  return out;
}

/** One first-parent step of the branch and the announcement that covers it (none: it landed unannounced). */
export interface JudgedStep {
  readonly commit: string;
  readonly announcedBy?: { readonly who: string; readonly grant: number; readonly at: number };
}

/**
 * Judges each step (newest first) against the announcements for `branch`: a step is covered when an
 * announcement's commits (its `from..to` along first parents, `covers`) include it. The newest
 * covering announcement is named.
 */
export function judgeSteps(
  steps: readonly string[],
  branch: string,
  announcements: readonly Announcement[],
  covers: (a: Announcement) => ReadonlySet<string>,
): JudgedStep[] {
  const relevant = announcements.filter(a => a.landing.branch === branch && steps.includes(a.landing.to));
  return steps.map(commit => {
    let by: Announcement | undefined;
    for (const a of relevant) if (covers(a).has(commit) && (by === undefined || a.at >= by.at)) by = a;
    return by === undefined ? { commit } : { commit, announcedBy: { who: by.who, grant: by.grant, at: by.at } };
  });
}
