// Durations in documents: a number is milliseconds, a string is passed as
// written ("90s", "1h30m", "PT90S"). Numbers are spelled as Go spells a
// time.Duration ("1m30s"), so a document built here is byte for byte the
// one the Go SDK builds.

/** A duration: milliseconds, or a duration string as a document would hold it ("90s", "72h"). */
export type Duration = number | string;

/** Milliseconds in a second, minute and hour, for building durations: `2 * HOUR`. */
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** Spells d for a document; 0 and undefined are left out (undefined). */
export function durationString(d: Duration | undefined): string | undefined {
  if (d === undefined || d === 0 || d === "") return undefined;
  if (typeof d === "string") return d;
  if (!Number.isFinite(d) || d < 0) throw new RangeError(`ductor: a duration must be a positive number of ms, not ${d}`);
  if (d < SECOND) return `${trim(d)}ms`;
  const h = Math.floor(d / HOUR);
  const m = Math.floor((d % HOUR) / MINUTE);
  const s = (d % MINUTE) / SECOND;
  if (h > 0) return `${h}h${m}m${trim(s)}s`;
  if (m > 0) return `${m}m${trim(s)}s`;
  return `${trim(s)}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)));
}

/** Spells a moment as RFC 3339 in UTC, without a fraction when it has none. */
export function timeString(t: Date | string | undefined): string | undefined {
  if (t === undefined || t === "") return undefined;
  if (typeof t === "string") return t;
  return t.toISOString().replace(/\.000Z$/, "Z");
}
