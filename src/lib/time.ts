/** The one timestamp format of the service: ISO 8601 UTC with milliseconds (sortable as text). */
export function isoNow(): string {
  return new Date().toISOString();
}

/** Normalises any ISO 8601 input to the stored format; null when it is not a valid time. */
export function toIso(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
