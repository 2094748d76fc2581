/**
 * Run by runtimes.test.ts with plain `node` (no TypeScript loader, no bundler) and with Deno,
 * from a consumer project whose node_modules holds the package as `npm install <folder>`
 * puts it: the built client (docs/api.md §16.3) as users import it. Typed calls, paging,
 * an upsert, a chunked batch and verifyWebhook of a real delivery. Reads CRM_PROBE_INPUT
 * (JSON) and prints one JSON line of what it saw.
 */
import { createClient } from "@crm-service/client";
import { verifyWebhook, WebhookVerificationError } from "@crm-service/client/webhooks";

const input = JSON.parse(globalThis.process?.env.CRM_PROBE_INPUT ?? "{}");
const crm = createClient({ baseUrl: input.baseUrl, apiKey: input.apiKey });
const ping = await crm.GET("/ping");
const email = `probe.${Date.now()}.${Math.random().toString(36).slice(2)}@example.com`;
const created = await crm.POST("/contacts", { body: { firstName: "Probe", email } });
const contacts = [];
for await (const contact of crm.paginate("/contacts", { params: { query: { limit: 1 } } })) contacts.push(contact.contactId);
const upsert = await crm.upsertContact({ email, lastName: "Runtime" }, { matchOn: "email" });
const batch = await crm.batchContacts(
  { operation: "upsert", matchOn: "email", items: [{ email, firstName: "Probe" }, { email: `b.${email}` }, { email: `c.${email}` }] },
  { chunkSize: 2 },
);
const event = await verifyWebhook(input.secret, input.headers, input.body);
let tampered = "accepted";
try {
  await verifyWebhook(input.secret, input.headers, `${input.body} `);
} catch (error) {
  tampered = error instanceof WebhookVerificationError ? error.reason : String(error);
}
console.log(
  JSON.stringify({
    projectId: ping.data?.projectId,
    created: created.response.status,
    contacts,
    upsert: upsert.result,
    batch: { indexes: batch.results.map((r) => r.index), results: batch.results.map((r) => r.result), summary: batch.summary },
    eventId: event.id,
    tampered,
  }),
);
