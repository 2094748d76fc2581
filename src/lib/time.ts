import { z } from "@hono/zod-openapi";
import type { Clock } from "./clock.ts";

/**
 * The one timestamp format of the service: ISO 8601 UTC with milliseconds (sortable as
 * text). Always read from a clock given (src/lib/clock.ts): the running service's, or the
 * system's in the CLI; never the wall clock behind the service's back (issue 11).
 */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:(Z)|([+-])(\d{2})(?::?(\d{2}))?)$/i;

const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `YYYY-MM-DD` of a real calendar day (2021-02-30 is refused, not rolled over to March): [y, m, d]. */
function calendarDate(text: string): [number, number, number] | null {
  const m = DATE.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const days = mo === 2 && isLeapYear(y) ? 29 : DAYS[mo];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days! ? [y, mo, d] : null;
}

/**
 * Normalises an input timestamp (docs/api.md §3.4) to the stored format; null when it is
 * not one. Accepted: an RFC 3339 date-time WITH its offset (`Z`, `+02:00`; the document's
 * `format: date-time`), or a date alone (`format: date`), meaning its midnight UTC. A
 * date-time without an offset is refused: its instant depends on a zone nobody named. The
 * rules are ajv-formats' (src/lib/formats.ts), a leap second included (23:59:60 UTC counts
 * as the next day's first instant).
 */
export function toIso(value: string): string | null {
  const parts = value.split(/t|\s/i);
  const date = calendarDate(parts[0]!);
  if (!date || parts.length > 2) return null;
  const [y, mo, d] = date;
  if (parts.length === 1) return new Date(Date.UTC(y, mo - 1, d)).toISOString();
  const t = TIME.exec(parts[1]!);
  if (!t) return null;
  const [h, mi, s] = [Number(t[1]), Number(t[2]), Number(t[3])];
  const sign = t[6] === "-" ? -1 : 1;
  const [oh, om] = t[5] ? [0, 0] : [Number(t[7]), Number(t[8] ?? 0)];
  if (oh > 23 || om > 59 || h > 23 || mi > 59 || s > 60) return null;
  const utcMinutes = h * 60 + mi - sign * (oh * 60 + om);
  // A leap second is only 23:59:60 in UTC.
  if (s === 60 && ((utcMinutes % 1440) + 1440) % 1440 !== 1439) return null;
  const ms = t[4] ? Math.floor(Number(`0${t[4]}`) * 1000) : 0;
  return new Date(Date.UTC(y, mo - 1, d, 0, utcMinutes, s, ms)).toISOString();
}

/** How the document describes an input timestamp: exactly what toIso accepts. */
export const inputTimestampFormat = { anyOf: [{ format: "date-time" }, { format: "date" }] };

/** An RFC 3339 date-time with its offset, or a date alone (`date`, `since`, `until`, `updatedSince`; docs/api.md §3.4). */
export const isoTimeSchema = z
  .string()
  .refine((v) => toIso(v) !== null, "must be an ISO 8601 timestamp, such as 2024-05-01T10:00:00Z or 2024-05-01.")
  .openapi({
    ...inputTimestampFormat,
    description: "RFC 3339 date-time with its offset (Z or ±hh:mm), or a date alone (2024-05-01, its midnight UTC). A date-time without an offset is refused.",
    example: "2026-01-15T09:30:00Z",
  } as object);

/** A timestamp the service answers with: ISO 8601 UTC with milliseconds (see isoNow). */
export const timestampSchema = z.string().openapi({ format: "date-time", example: "2026-01-15T09:30:00.000Z" });
