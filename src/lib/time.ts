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

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Normalises an ISO 8601 date or date-time to the stored format; null when it is not a
 * real calendar time (2021-02-30 is refused, not rolled over to March).
 */
export function toIso(value: string): string | null {
  const m = ISO.exec(value);
  if (!m) return null;
  const [, y, mo, d, h = "0", mi = "0", s = "0"] = m;
  const daysInMonth = new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate();
  if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > daysInMonth) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** An ISO 8601 date or date-time in a body or a query (`date`, `since`, `until`, `updatedSince`). */
export const isoTimeSchema = z
  .string()
  .refine((v) => toIso(v) !== null, "must be an ISO 8601 timestamp, such as 2024-05-01T10:00:00Z or 2024-05-01.")
  .openapi({ format: "date-time", description: "ISO 8601; a date alone (2024-05-01) means its midnight UTC.", example: "2026-01-15T09:30:00Z" });

/** A timestamp the service answers with: ISO 8601 UTC with milliseconds (see isoNow). */
export const timestampSchema = z.string().openapi({ format: "date-time", example: "2026-01-15T09:30:00.000Z" });
