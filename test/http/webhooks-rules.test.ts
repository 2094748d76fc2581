/**
 * Webhook rules beyond delivery, black box: `Idempotency-Key` on the webhook actions
 * (docs/api.md §8: the first runs, a repeat replays with `Idempotent-Replayed: true` and does
 * nothing, the key on another request is 422 ERR_IDEMPOTENCY_KEY_REUSED, a repeat while the
 * first runs is 409) and secrets at rest (docs/api.md §13.2: stored encrypted; never in the
 * database file, its WAL or the log; on PostgreSQL never in a row, the database's files,
 * the WAL or the log).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { clusterDataDirOf, pgClient, postgresOnly, sqliteOnly } from "../helpers/postgres.ts";
import { distinct, parseServiceSignature, serviceSignatureIndex, standardSignatureIndex } from "../helpers/receiver.ts";
import { SECRET_RE, useWebhookServer, WAIT_MS } from "../helpers/webhook-fixture.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(60_000);

const fx = useWebhookServer({
  env: "sandbox",
  extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "30000" },
});
const { receiver, createHook, getHook, attempts, waitForAttempts, untilOutboxDrained, newContact } = fx;

let keySeq = 0;
/** A fresh Idempotency-Key value (keys belong to one API key; each test uses its own anyway). */
const idemKey = (what: string) => ({ "Idempotency-Key": `${what}-${process.pid}-${++keySeq}-${Date.now()}` });

/** A request function bound to one API key, so repeats are "the same key id" (docs/api.md §11). */
async function oneKey() {
  const key = await fx.srv.newKey(["webhooks:manage", "contacts:write"]);
  const call: typeof fx.api = (method, path, opts = {}) => fx.api(method, path, { ...opts, key });
  return call;
}

describe("Idempotency-Key on POST /webhooks/{id}/test", () => {
  test("a repeat replays the first answer with Idempotent-Replayed: true and sends no second ping", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("ping");
    const first = await call("POST", `/webhooks/${w.id}/test`, { headers });
    expectStatus(first, 200);
    expect(first.json).toEqual({ delivered: true, statusCode: 200, error: null });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    await rx.waitFor(1);

    const again = await call("POST", `/webhooks/${w.id}/test`, { headers });
    expectStatus(again, 200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    // A ping is sent before its answer, and the receiver reports requests in arrival order.
    // Once a later ping (without the key) is reported, a ping sent by the replay would have
    // been too: there is none.
    const markerSentAt = Date.now();
    expectStatus(await call("POST", `/webhooks/${w.id}/test`), 200);
    await rx.waitUntil((reqs) => reqs.some((r) => r.at >= markerSentAt), WAIT_MS, "the later ping");
    expect(rx.requests).toHaveLength(2);
    expect(distinct(rx.requests.map((r) => r.json.id))).toHaveLength(2);
  });

  test("the same key on another action of the subscription is 422 ERR_IDEMPOTENCY_KEY_REUSED and does nothing", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("ping-reuse");
    expectStatus(await call("POST", `/webhooks/${w.id}/test`, { headers }), 200);
    await rx.waitFor(1);
    const rotate = await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers });
    expectError(rotate, "ERR_IDEMPOTENCY_KEY_REUSED");
    expect(rotate.text).not.toContain("whsec_");
    // Not rotated: a delivery carries one signature, by the original secret.
    await newContact({}, call);
    const [, delivery] = await rx.waitFor(2);
    expect(parseServiceSignature(delivery!.headers["x-service-signature"]).v1).toHaveLength(1);
    expect(serviceSignatureIndex(w.secret, delivery!)).toBe(0);
  });

  test("a repeat while the first ping is still being answered is 409 ERR_CONFLICT", async () => {
    const call = await oneKey();
    const rx = await receiver({ status: 200, hold: true });
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("ping-running");
    const first = call("POST", `/webhooks/${w.id}/test`, { headers });
    await rx.waitFor(1); // the first request is inside its handler, waiting on the receiver
    expectError(await call("POST", `/webhooks/${w.id}/test`, { headers }), "ERR_CONFLICT");
    await rx.release();
    const answered = await first;
    expectStatus(answered, 200);
    expect(answered.json.delivered).toBe(true);
    expect(rx.requests).toHaveLength(1);
  });
});

describe("Idempotency-Key on POST /webhooks/{id}/rotate-secret", () => {
  test("a repeat replays the same new secret and does not rotate again", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("rotate");
    const first = await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers });
    expectStatus(first, 200);
    expect(first.json.secret).toMatch(SECRET_RE);
    expect(first.json.secret).not.toBe(w.secret);

    const again = await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers });
    expectStatus(again, 200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);

    // Rotated once: a delivery is signed by the new secret first and the original second.
    // A second rotation would have signed with a third secret and the first new one.
    await newContact({}, call);
    const [req] = await rx.waitFor(1);
    expect(parseServiceSignature(req!.headers["x-service-signature"]).v1).toHaveLength(2);
    expect(serviceSignatureIndex(first.json.secret, req!)).toBe(0);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(1);
    expect(standardSignatureIndex(first.json.secret, req!)).toBe(0);
    expect(standardSignatureIndex(w.secret, req!)).toBe(1);
  });

  test("the same key on another action is 422 ERR_IDEMPOTENCY_KEY_REUSED and sends no ping", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("rotate-reuse");
    expectStatus(await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers }), 200);
    expectError(await call("POST", `/webhooks/${w.id}/test`, { headers }), "ERR_IDEMPOTENCY_KEY_REUSED");
    // The next delivery is the first request the receiver reports (in arrival order): the
    // refused ping sent nothing.
    await newContact({}, call);
    await rx.waitUntil((reqs) => reqs.some((r) => r.headers["x-service-event"] === "contact.created"), WAIT_MS, "the delivery");
    expect(rx.requests.map((r) => r.headers["x-service-event"])).toEqual(["contact.created"]);
  });
  test("the same key with a body is refused before the key is looked at: the action takes no body (422 body, docs/api.md §3.3), and nothing rotates again", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    const headers = idemKey("rotate-body");
    const first = await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers });
    expectStatus(first, 200);
    expectError(await call("POST", `/webhooks/${w.id}/rotate-secret`, { headers, body: { reason: "again" } }), "ERR_FORM_VALIDATION", "body");
    // Still rotated once: deliveries carry the first new secret and the original.
    await newContact({}, call);
    const [req] = await rx.waitFor(1);
    expect(serviceSignatureIndex(first.json.secret, req!)).toBe(0);
    expect(serviceSignatureIndex(w.secret, req!)).toBe(1);
  });
});

describe("Idempotency-Key on POST /webhooks/{id}/redeliver", () => {
  test("a repeat replays 202 {queued} and queues nothing more; another body with the key is 422 ERR_IDEMPOTENCY_KEY_REUSED", async () => {
    const call = await oneKey();
    const rx = await receiver();
    const w = await createHook(rx.url, ["contact.created"], undefined, call);
    await newContact({}, call);
    await newContact({}, call);
    const [e1, e2] = (await rx.waitFor(2)).map((r) => r.json.id as string);
    await untilOutboxDrained(); // both recorded: neither is pending, so each can be queued again

    const headers = idemKey("redeliver");
    const first = await call("POST", `/webhooks/${w.id}/redeliver`, { headers, body: { eventIds: [e1] } });
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ queued: 1 });
    await rx.waitFor(3);
    await untilOutboxDrained(); // the redelivery is recorded: a second one could be queued now

    const again = await call("POST", `/webhooks/${w.id}/redeliver`, { headers, body: { eventIds: [e1] } });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual({ queued: 1 });

    const other = await call("POST", `/webhooks/${w.id}/redeliver`, { headers, body: { eventIds: [e1, e2] } });
    expectError(other, "ERR_IDEMPOTENCY_KEY_REUSED");

    // Whatever the replay and the refusal queued would have been sent by now: nothing was.
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(3);
    expect(rx.forEvent(e1)).toHaveLength(2);
    expect(rx.forEvent(e2)).toHaveLength(1);
    expect(await attempts(w.id, call)).toHaveLength(3);
  });
});

describe("secrets at rest (docs/webhooks.md §2, §2.2)", () => {
  /** A webhook whose secret was rotated (both with Idempotency-Key) and used to sign a delivery: its two secrets. */
  async function secretsInUse() {
    const call = await oneKey();
    const rx = await receiver();
    const created = await call("POST", "/webhooks", { headers: idemKey("at-rest"), body: { url: rx.url, events: ["*"] } });
    expectStatus(created, 201);
    fx.track(created.json.id, call);
    const rotated = await call("POST", `/webhooks/${created.json.id}/rotate-secret`, { headers: idemKey("at-rest-rotate") });
    expectStatus(rotated, 200);
    const secrets = [created.json.secret as string, rotated.json.secret as string];
    for (const s of secrets) expect(s).toMatch(SECRET_RE);
    // A delivery signed with both, so the secrets have been read and used.
    await newContact({}, call);
    const [req] = await rx.waitFor(1);
    expect(serviceSignatureIndex(secrets[1]!, req!)).toBe(0);
    expect(serviceSignatureIndex(secrets[0]!, req!)).toBe(1);
    await waitForAttempts(created.json.id, 1, call);
    return { id: created.json.id as string, call, secrets };
  }

  /** Neither "whsec_" (unless `prefixToo` is false) nor a secret's base64 part is in `text`. */
  const expectNoSecret = (where: string, text: string | Buffer, secrets: string[], prefixToo = true) => {
    if (prefixToo) expect(text.includes("whsec_"), `"whsec_" in ${where}`).toBe(false);
    for (const s of secrets) expect(text.includes(s.slice("whsec_".length)), `a secret's base64 part in ${where}`).toBe(false);
  };

  test.skipIf(sqliteOnly)(
    "no webhook secret is in the database file, its WAL or the log, neither whole nor its base64 part, also after a rotation and in stored Idempotency-Key answers",
    async () => {
      const { id, call, secrets } = await secretsInUse();
      const db = join(fx.srv.dir, "crm.db");
      const files = [db, `${db}-wal`].map((path) => ({ path, text: readFileSync(path).toString("latin1") }));
      // The WAL holds the latest writes (the rows just written), unless checkpointed into the file.
      expect(files.reduce((n, f) => n + f.text.length, 0)).toBeGreaterThan(0);
      const logs = { path: "stdout+stderr", text: fx.srv.stdout() + fx.srv.stderr() };
      for (const { path, text } of [...files, logs]) expectNoSecret(path, text, secrets);
      expect(await getHook(id, call)).not.toHaveProperty("secret");
    },
  );

  test.skipIf(postgresOnly)(
    "PostgreSQL: no webhook secret is in any row of the database, its files, the cluster's WAL or the log, neither whole nor its base64 part, also after a rotation and in stored Idempotency-Key answers",
    async () => {
      const { id, call, secrets } = await secretsInUse();
      expect(await getHook(id, call)).not.toHaveProperty("secret");
      const url = fx.srv.databaseUrl!;
      const client = await pgClient(url);
      try {
        // Every row of every table, as text.
        const tables = (
          await client.query<{ name: string }>(
            "SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')",
          )
        ).rows.map((r) => r.name);
        expect(tables.length).toBeGreaterThan(0);
        let rows = "";
        for (const table of tables) rows += (await client.query<{ row: string }>(`SELECT t::text AS row FROM ${table} t`)).rows.map((r) => r.row).join("\n");
        expect(rows).toContain(id); // the webhook's own row is among them
        expectNoSecret("the database's rows", rows, secrets);
        expectNoSecret("stdout+stderr", fx.srv.stdout() + fx.srv.stderr(), secrets);

        // The files on disk, once the checkpoint has written every page: the database's own,
        // and the cluster's WAL (shared with the run's other databases: only this test's
        // secrets are looked for there).
        const dataDir = await clusterDataDirOf(url);
        if (dataDir === null) return; // a cluster of someone else's: its files are not ours to read
        await client.query("CHECKPOINT");
        const oid = (await client.query<{ oid: number }>("SELECT oid FROM pg_database WHERE datname = current_database()")).rows[0]!.oid;
        const filesIn = (folder: string) => readdirSync(folder, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(folder, e.name));
        const databaseFiles = filesIn(join(dataDir, "base", String(oid)));
        expect(databaseFiles.length).toBeGreaterThan(0);
        for (const path of databaseFiles) expectNoSecret(path, readFileSync(path), secrets);
        for (const path of filesIn(join(dataDir, "pg_wal"))) expectNoSecret(path, readFileSync(path), secrets, false);
      } finally {
        await client.end();
      }
    },
  );
});
