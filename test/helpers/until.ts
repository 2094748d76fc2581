/**
 * The one wait of the test suite: polls `probe` until it gives a value other than
 * undefined/false/null, or throws after `timeoutMs` naming what it waited for. Tests wait
 * for a condition, never for a fixed time.
 */
export interface UntilOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the error (a function: evaluated at the timeout). */
  what?: string | (() => string);
}

export async function until<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  opts: UntilOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as T;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const what = typeof opts.what === "function" ? opts.what() : (opts.what ?? "condition");
      const detail = last instanceof Error ? `; last error: ${last.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
  }
}
