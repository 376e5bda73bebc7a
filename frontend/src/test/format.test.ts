import { describe, expect, it } from 'vitest';
import { clockTime, duration, errorText, fullTime, plural, relativeTime, timeLeft } from '../lib/format';

describe('format', () => {
  const now = new Date(2025, 5, 3, 14, 2, 11, 123).getTime();

  it('errorText reads what Wails rejects with', () => {
    expect(errorText('approve profile: no such profile')).toBe('approve profile: no such profile');
    expect(errorText(new Error('boom'))).toBe('boom');
    expect(errorText({ message: 'from an object' })).toBe('from an object');
    expect(errorText('')).toMatch(/no details/);
    expect(errorText(undefined)).toMatch(/no details/);
  });

  it('clockTime is the time today, the date otherwise', () => {
    expect(clockTime(now - 1000, now)).toBe('14:02:10');
    expect(clockTime(new Date(2025, 5, 1, 9, 5).getTime(), now)).toBe('Jun 1, 09:05');
    expect(clockTime(0, now)).toBe('—');
    expect(fullTime(now)).toBe('2025-06-03 14:02:11.123');
  });

  it('relativeTime', () => {
    expect(relativeTime(0, now)).toBe('never');
    expect(relativeTime(now - 3000, now)).toBe('just now');
    expect(relativeTime(now - 42_000, now)).toBe('42 s ago');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3600_000, now)).toBe('3 h ago');
    expect(relativeTime(now - 50 * 3600_000, now)).toBe('2 d ago');
  });

  it('timeLeft counts down to the deadline', () => {
    expect(timeLeft(now + 41_200, now)).toBe('42 s');
    expect(timeLeft(now + 125_000, now)).toBe('2 min 05 s');
    expect(timeLeft(now - 1000, now)).toBe('0 s');
  });

  it('duration and plural', () => {
    expect(duration(0.42)).toBe('0.4 ms');
    expect(duration(12.5)).toBe('12.5 ms');
    expect(duration(1520.4)).toBe('1,520 ms');
    expect(duration(Number.NaN)).toBe('—');
    expect(plural(1, 'profile')).toBe('1 profile');
    expect(plural(3, 'profile')).toBe('3 profiles');
  });
});
