/**
 * Human formatting shared by the command line and the extension. Pure (given the process's time
 * zone). One time format for people: local time with the zone's name; JSON carries epoch ms.
 */

/** `1h 52m`, `14m 05s`, `42s`; negative durations read as `0s`. Rounded up: a 5 s lease reads `5s`, not `4s`. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(Math.round(ms) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The local zone's short name at that instant (`UTC`, `CET`, `GMT+1`). */
export function zoneName(epochMs: number): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(new Date(epochMs))
    .find(p => p.type === 'timeZoneName');
  return part?.value ?? 'UTC';
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Local wall time with the zone, `14:05 UTC`, for "since 14:05 UTC". */
export function formatClock(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())} ${zoneName(epochMs)}`;
}

/** Local date and time with the zone, `2026-12-01 14:05:07 UTC`, for audit lines. */
export function formatTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())} ${zoneName(epochMs)}`;
}

/**
 * Audit details stored in the record name times as UTC ISO (`2026-12-01T13:05:00Z`, the same on
 * every machine, so the server guard can re-derive them): shown to people in the one local format.
 */
export function localiseTimes(text: string): string {
  return text.replace(/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{3})?Z\b/g, iso => formatTime(Date.parse(iso)));
}
