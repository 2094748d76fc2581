import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.ts";
import { fromTrustedProxy } from "../http/client-address.ts";
import type { AdminEnv } from "./env.ts";
import { findSession, randomToken } from "./sessions.ts";

/**
 * The console's policy (docs/admin.md §3, docs/operations.md §3.1): everything from this server, no inline script
 * or style, never framed, forms post only here.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export const SESSION_COOKIE = "crm_admin";
/** Before sign-in there is no session to hold a CSRF token: a cookie of its own holds it (double submit). */
export const PRE_SESSION_COOKIE = "crm_admin_csrf";

export function adminHeaders(): MiddlewareHandler<AdminEnv> {
  return async function adminHeaders(c, next) {
    await next();
    c.header("Content-Security-Policy", ADMIN_CSP);
    c.header("X-Frame-Options", "DENY");
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "same-origin");
    // Pages hold customer data and one-time secrets: never stored by a browser or a proxy.
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
  };
}

/** The request came over HTTPS: directly, or through a trusted proxy that says so (CRM_TRUST_PROXY). */
export function isHttps(c: Context<AdminEnv>): boolean {
  if (new URL(c.req.url).protocol === "https:") return true;
  const trusted = c.var.deps.config.CRM_TRUST_PROXY ?? [];
  return fromTrustedProxy(c.env?.ip ?? "", trusted) && c.req.header("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}

/** HttpOnly, SameSite=Strict, scoped to /admin, Secure over HTTPS (docs/admin.md §2). */
export function setAdminCookie(c: Context<AdminEnv>, name: string, value: string, maxAge?: number) {
  setCookie(c, name, value, { path: "/admin", httpOnly: true, sameSite: "Strict", secure: isHttps(c), maxAge });
}

/** Loads the session of the request's cookie, if it has a live one. */
export function loadSession(): MiddlewareHandler<AdminEnv> {
  return async function loadSession(c, next) {
    const token = getCookie(c, SESSION_COOKIE);
    if (token) {
      const session = await findSession(c.var.deps.db, c.var.deps.writes, token, c.var.deps.clock.now());
      if (session) c.set("session", session);
    }
    await next();
  };
}

/** The Origin a browser sends equals this server's (the Host it was asked for). */
function sameOrigin(c: Context<AdminEnv>): boolean {
  const origin = c.req.header("origin");
  if (!origin || origin === "null") return false;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const trusted = fromTrustedProxy(c.env?.ip ?? "", c.var.deps.config.CRM_TRUST_PROXY ?? []);
  const expected = (trusted && c.req.header("x-forwarded-host")?.split(",")[0]?.trim()) || c.req.header("host") || new URL(c.req.url).host;
  return host === expected;
}

const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export type Refusal = "origin" | "csrf";

/**
 * Every POST (docs/admin.md §3): the Origin header must be this server's, and the form's
 * `_csrf` must be the session's token (or, before sign-in, the pre-session cookie's).
 * The parsed form is kept on the context for the handler. A refusal is answered 403 by
 * `refuse`, before any handler runs.
 */
export function checkPost(refuse: (c: Context<AdminEnv>, why: Refusal) => Response | Promise<Response>): MiddlewareHandler<AdminEnv> {
  return async function checkPost(c, next) {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    if (!sameOrigin(c)) return refuse(c, "origin");
    // Nothing to match a token against (no session, no pre-session cookie): refused before
    // the body is read (docs/security.md §2).
    const expected = c.var.session?.csrfToken ?? getCookie(c, PRE_SESSION_COOKIE) ?? "";
    if (expected === "") return refuse(c, "csrf");
    const form = await c.req.parseBody({ all: true }).catch((error) => {
      if (error instanceof ApiError) throw error; // the body passed its limit as it streamed in (413)
      return null;
    });
    if (!form) return refuse(c, "csrf");
    const sent = typeof form._csrf === "string" ? form._csrf : "";
    if (!equal(sent, expected)) return refuse(c, "csrf");
    c.set("form", form);
    await next();
  };
}

/** The pre-session CSRF token for a sign-in or setup form, set as its cookie when new. */
export function preSessionToken(c: Context<AdminEnv>): string {
  const existing = getCookie(c, PRE_SESSION_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  setAdminCookie(c, PRE_SESSION_COOKIE, token);
  return token;
}

/** A form field as one string ('' when absent; the first when sent twice). */
export function field(c: Context<AdminEnv>, name: string): string {
  const value = c.var.form?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : "";
}

/**
 * A date-time as a `datetime-local` field sends it (no zone) is read as UTC, as the console
 * shows every time; text with a zone, or anything else, is left for the schema to judge.
 */
export function asUtc(text: string): string;
export function asUtc(text: string | undefined): string | undefined;
export function asUtc(text: string | undefined) {
  if (!text) return text;
  // datetime-local leaves out the seconds when they are zero; RFC 3339 (src/lib/time.ts) needs them.
  if (/T\d{2}:\d{2}$/.test(text)) return `${text}:00Z`;
  return /T\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(text) ? `${text}Z` : text;
}

/** Every value of a repeated field (checkboxes). */
export function fields(c: Context<AdminEnv>, name: string): string[] {
  const value = c.var.form?.[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === "string");
}
