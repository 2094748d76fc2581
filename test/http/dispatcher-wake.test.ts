/**
 * The dispatcher is woken by the commit that queued deliveries (docs/webhooks.md §2: delivery at
 * loopback speed), not by every write: src/webhooks/outbox.ts marks the transaction, and
 * only its commit wakes the dispatcher. With the outbox poll set to ten minutes, a delivery
 * that arrives within seconds can only have been sent by that wake.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";

setDefaultTimeout(60_000);

const fx = useWebhookServer({ env: "sandbox", extraEnv: { CRM_OUTBOX_POLL_MS: "600000", CRM_WEBHOOK_RETRY_SCHEDULE: "1h" } });
const SOON_MS = 5_000;

test("a create's delivery leaves right after its commit, not at the next poll", async () => {
  const rx = await fx.receiver();
  await fx.createHook(rx.url, ["contact.created"]);
  const contact = await fx.newContact();
  const [got] = await rx.waitFor(1, SOON_MS);
  expect(got!.json.data.contact.contactId).toBe(contact.contactId);
});

test("an interaction log's delivery leaves right after its commit too", async () => {
  const rx = await fx.receiver();
  const contact = await fx.newContact();
  await fx.createHook(rx.url, ["interaction_log.created"]);
  const res = await fx.api("POST", `/contacts/${contact.contactId}/interactions`, { body: { type: "note", note: "Called back" } });
  expect(res.status).toBe(201);
  const [got] = await rx.waitFor(1, SOON_MS);
  expect(got!.json.event).toBe("interaction_log.created");
});

test("a redelivery leaves at once: queueing it wakes the dispatcher as a new event does", async () => {
  const rx = await fx.receiver();
  const w = await fx.createHook(rx.url, ["contact.created"]);
  await fx.newContact();
  const [first] = await rx.waitFor(1, SOON_MS);
  await fx.waitForAttempts(w.id, 1);
  const res = await fx.api("POST", `/webhooks/${w.id}/redeliver`, { body: { eventIds: [first!.json.id] } });
  expect(res.status).toBe(202);
  const both = await rx.waitFor(2, SOON_MS);
  expect(both[1]!.json.id).toBe(first!.json.id);
});
