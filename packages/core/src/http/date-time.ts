/**
 * RFC 3339 date-times (CONTRACT §5 `occurred_at`): `full-date "T" full-time` with an offset,
 * `T` and `Z` in either case (RFC 3339 §5.6 note), seconds up to 60 (a leap second), calendar-exact,
 * fractional seconds of 1 to 9 digits (nanoseconds: RFC 3339 sets no bound, a payments API does).
 * @module
 */

const DATE_TIME =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * @example isRfc3339DateTime("2026-11-20T10:15:00Z"); // true
 * @example isRfc3339DateTime("2026-02-29T10:15:00+01:00"); // false: 2026 is not a leap year
 * @example isRfc3339DateTime("2026-11-20T10:15:00"); // false: no offset
 * @example isRfc3339DateTime("2026-11-20T10:15:00.1234567890Z"); // false: 10 fractional digits
 */
export function isRfc3339DateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (m === null) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  if (second === 60 && minute !== 59) return false; // a leap second ends a minute
  if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return false;
  return true;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
