/**
 * Run by runtimes.test.ts under Deno, and bundled for Node 20: the typed client on a
 * runtime other than Bun (docs/api.md §16: "only fetch and Web Crypto"). Reads its inputs
 * from CRM_PROBE_INPUT (JSON) and prints one JSON line of what it saw.
 */
import { createClient, verifyWebhook, WebhookVerificationError } from "../../clients/typescript/src/index.ts";

interface ProbeInput {
  baseUrl: string;
  apiKey: string;
  secret: string;
  headers: Record<string, string>;
  body: string;
}

const input = JSON.parse((globalThis as { process?: { env: Record<string, string> } }).process?.env.CRM_PROBE_INPUT ?? "{}") as ProbeInput;
const crm = createClient({ baseUrl: input.baseUrl, apiKey: input.apiKey });
const ping = await crm.GET("/ping");
const created = await crm.POST("/contacts", { body: { firstName: "Probe", email: `probe.${Date.now()}@example.com` } });
const contacts: string[] = [];
for await (const contact of crm.paginate("/contacts", { params: { query: { limit: 1 } } })) contacts.push(contact.contactId);
const event = await verifyWebhook(input.secret, input.headers, input.body);
let tampered = "accepted";
try {
  await verifyWebhook(input.secret, input.headers, `${input.body} `);
} catch (error) {
  tampered = error instanceof WebhookVerificationError ? error.reason : String(error);
}
console.log(JSON.stringify({ projectId: ping.data?.projectId, created: created.response.status, contacts, eventId: event.id, tampered }));
