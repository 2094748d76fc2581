import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AdminEnv } from "./env.ts";
import { setAdminCookie } from "./security.ts";

/**
 * A secret shown once (docs/admin.md §2): the action that makes it (a new key, a rotated
 * signing secret) seals it into a short-lived cookie for the page it redirects to, and
 * that page shows it and clears the cookie. So the secret is never in a URL, a reload
 * shows it no more, and a reload posts nothing, so it never makes a second one. The seal
 * names the session, so the cookie is worth nothing in another.
 */
const COOKIE = "crm_admin_once";
/** Long enough for the redirect, short enough that a lost one is soon gone. */
const MAX_AGE_SECONDS = 120;

export interface OnceValue {
  /** What the value is, as the page labels it ("New API key"). */
  label: string;
  value: string;
  /** Which record it belongs to (a key's or a subscription's id). */
  about: string;
}

/** Keeps `once` for the next page and answers the redirect to it (303, so the reload is a GET). */
export function showOnceAfterRedirect(c: Context<AdminEnv>, once: OnceValue, location: string) {
  const sealed = c.var.deps.secrets.seal(JSON.stringify({ session: c.var.session.id, ...once }));
  setAdminCookie(c, COOKIE, sealed, MAX_AGE_SECONDS);
  return c.redirect(location, 303);
}

/** The value kept for this page, once: it is cleared as it is read. Null when there is none (a reload). */
export function takeShownOnce(c: Context<AdminEnv>): OnceValue | null {
  const sealed = getCookie(c, COOKIE);
  if (!sealed) return null;
  setAdminCookie(c, COOKIE, "", 0);
  try {
    const once = JSON.parse(c.var.deps.secrets.open(sealed)) as OnceValue & { session: string };
    if (once.session !== c.var.session.id) return null;
    return { label: once.label, value: once.value, about: once.about };
  } catch {
    return null;
  }
}
