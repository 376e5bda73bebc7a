// Formatting helpers: plain functions of their inputs (the clock is passed
// in), so every page renders the same text and the tests can pin it.

/** The text of a rejected binding: Wails rejects with the Go error's text. */
export function errorText(err: unknown): string {
  let text = '';
  if (typeof err === 'string') text = err;
  else if (err instanceof Error) text = err.message;
  else if (err && typeof err === 'object' && 'message' in err) text = String(err.message);
  else if (err !== undefined && err !== null) text = String(err);
  return text.trim() || 'Something went wrong, with no details; see the Tether log.';
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** "14:02:11" on the day of now, "Jun 3, 14:02" on another day. */
export function clockTime(ms: number, now: number): string {
  if (!ms) return '—';
  const d = new Date(ms);
  const today = new Date(now);
  const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (d.toDateString() === today.toDateString()) return hms;
  const month = d.toLocaleString('en-US', { month: 'short' });
  return `${month} ${d.getDate()}, ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "2025-06-03 14:02:11.123", local time. */
export function fullTime(ms: number): string {
  if (!ms) return '—';
  const d = new Date(ms);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago"; "never" for 0. */
export function relativeTime(ms: number, now: number): string {
  if (!ms) return 'never';
  const s = Math.round((now - ms) / 1000);
  if (s < 10) return 'just now';
  if (s < 60) return `${s} s ago`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}

/** Time left until a deadline: "42 s", "2 min 05 s"; "0 s" once passed. */
export function timeLeft(deadlineMs: number, now: number): string {
  const s = Math.max(0, Math.ceil((deadlineMs - now) / 1000));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
}

/** A call's duration in milliseconds: "0.4 ms", "12.5 ms", "1,520 ms". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** "1 profile", "3 profiles". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
