import { z } from "zod";
import { parseAdminHosts } from "./admin/hosts.ts";
import { parseTrustedProxies } from "./http/client-address.ts";

/** Parses `5m`, `2.5h`, `10s`, `250ms` into milliseconds (docs/operations.md §1 retry schedule). */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(text.trim());
  if (!m) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
  return Math.round(Number(m[1]) * unit);
}

const schedule = z.string().transform((value, ctx) => {
  const parts = value.split(",").map((p) => p.trim()).filter(Boolean);
  const ms = parts.map(parseDuration);
  if (ms.some((v) => v === null)) {
    ctx.addIssue({ code: "custom", message: "expected durations like 10s,1m,5m,2.5h" });
    return z.NEVER;
  }
  return ms as number[];
});

/** A setting read by `parse`, whose error message becomes the start's one line (docs/operations.md §1). */
const parsedBy = <T>(parse: (text: string) => T) =>
  z.string().transform((value, ctx) => {
    try {
      return parse(value);
    } catch (error) {
      ctx.addIssue({ code: "custom", message: (error as Error).message });
      return z.NEVER;
    }
  });

/** `CRM_TRUST_PROXY` (docs/operations.md §8): addresses and CIDRs of the reverse proxies in front. */
const trustedProxies = parsedBy(parseTrustedProxies);

/** `CRM_ADMIN_HOSTS` (docs/security.md §5): the host names the console answers besides loopback. */
const adminHosts = parsedBy(parseAdminHosts);

/** `CRM_SECRET_KEY` (docs/operations.md §2, docs/webhooks.md §2): standard base64 of exactly 32 bytes, checked before anything is opened. */
const secretKey = z.string().refine((value) => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  try {
    return atob(value).length === 32;
  } catch {
    return false;
  }
}, "must be the base64 of 32 bytes");

/** `CRM_DATABASE_URL` (docs/scaling.md §6): PostgreSQL instead of the SQLite file; `sslmode` in the URL is honoured by `pg`. */
const databaseUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== "" && url.pathname.length > 1;
  } catch {
    return false;
  }
}, "must be a URL like postgres://user:password@host:5432/database");

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
const port = z.coerce.number().int().min(0).max(65535);

/** Every setting of docs/operations.md §1, one schema, parsed once at start. */
export const configSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  CRM_DB_PATH: z.string().min(1).default("./data/crm.db"),
  CRM_DATABASE_URL: databaseUrl.optional(),
  CRM_DB_POOL_SIZE: z.coerce.number().int().min(1).max(1000).default(10),
  CRM_ENV: z.enum(["production", "sandbox"]).default("production"),
  CRM_BOOTSTRAP: bool.default(true),
  CRM_SECRET_KEY: secretKey.optional(),
  CRM_SYNCHRONOUS: z.enum(["NORMAL", "FULL"]).default("NORMAL"),
  CRM_WEBHOOK_RETRY_SCHEDULE: schedule.default([10_000, 60_000, 300_000, 1_800_000, 3_600_000, 7_200_000, 9_000_000]),
  CRM_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  CRM_OUTBOX_POLL_MS: z.coerce.number().int().min(1).default(500),
  /** How long change records are kept (docs/api.md §19.2); a feed cursor older than that is 410. */
  CRM_CHANGES_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  CRM_LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  CRM_TRUST_PROXY: trustedProxies.default([]),
  CRM_ADMIN_HOSTS: adminHosts.default([]),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Reads the environment; a bad value throws one line naming the variable (docs/operations.md §1). */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    throw new ConfigError(`invalid ${name}=${JSON.stringify(env[name] ?? "")}: ${issue.message}`);
  }
  return parsed.data;
}
