import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { ConfigError } from "../config.ts";
import type { Db } from "../storage/schema.ts";
import { runtime } from "../runtime/index.ts";

/**
 * AES-256-GCM for secrets at rest (docs/api.md §13.2): webhook signing secrets and stored
 * Idempotency-Key answers. Sealed text is `v1.<iv>.<ciphertext+tag>` in base64url.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error("the secret key must be 32 bytes");
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `v1.${iv.toString("base64url")}.${data.toString("base64url")}`;
  }

  open(sealed: string): string {
    const [version, iv, data] = sealed.split(".");
    if (version !== "v1" || !iv || !data) throw new Error("not a sealed value");
    const bytes = Buffer.from(data, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString("utf8");
  }
}

/**
 * The server key: CRM_SECRET_KEY (base64 of 32 bytes), else `secret.key` beside the
 * database, created with mode 0600 on first start (docs/operations.md §1, docs/webhooks.md §2).
 */
export function loadSecretBox(secretKey: string | undefined, dbPath: string): SecretBox {
  if (secretKey) {
    const key = Buffer.from(secretKey, "base64");
    if (key.length !== 32) throw new Error("CRM_SECRET_KEY must be the base64 of 32 bytes");
    return new SecretBox(key);
  }
  if (dbPath === ":memory:") return new SecretBox(randomBytes(32));
  const path = join(dirname(dbPath), "secret.key");
  runtime.mkdirp(dirname(path));
  runtime.createPrivateFile(path, randomBytes(32).toString("base64"));
  const key = Buffer.from((runtime.readText(path) ?? "").trim(), "base64");
  if (key.length !== 32) throw new Error(`${path} does not hold the base64 of 32 bytes`);
  return new SecretBox(key);
}

/**
 * The key that sealed a database's secrets, for the CLI: CRM_SECRET_KEY, or the secret.key
 * beside `dbPath`; null when neither exists (never created here).
 */
export function existingSecretBox(secretKey: string | undefined, dbPath: string): SecretBox | null {
  if (secretKey) return loadSecretBox(secretKey, dbPath);
  return runtime.fileSize(join(dirname(dbPath), "secret.key")) === null ? null : loadSecretBox(undefined, dbPath);
}

const CANARY = "secret_key_check";

/**
 * Stops the start when the database's secrets were sealed under another key
 * (docs/scaling.md §6): nodes sharing a PostgreSQL database, or a copy made by `crm copy-to-postgres`, must
 * use the same CRM_SECRET_KEY, or every webhook secret would fail to open at delivery. The
 * first start records a sealed check value; later starts must be able to open it.
 */
export async function checkSecretKey(db: Db, secrets: SecretBox): Promise<void> {
  await db
    .insertInto("settings")
    .values({ name: CANARY, value: secrets.seal(CANARY) })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await db.selectFrom("settings").select("value").where("name", "=", CANARY).executeTakeFirstOrThrow();
  try {
    if (secrets.open(row.value) === CANARY) return;
  } catch {
    // falls through to the refusal
  }
  throw new ConfigError(
    "the server key does not open this database's secrets: start every node with the CRM_SECRET_KEY (or secret.key) that sealed them",
  );
}
