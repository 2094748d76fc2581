/**
 * Idempotency-Key on web-form submissions (docs/api.md §8 "every POST of the API", §10, §15):
 * a submission takes no API key, so its keys belong to its form.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
const createForm = async (redirect?: string) =>
  (await srv.cli(["form", "create", "--project", srv.projectId, "--json", "--name", "Leads", "--fields", "email,firstName", ...(redirect ? ["--redirect-url", redirect] : [])])) as {
    id: string;
  };
const submit = (formId: string, body: unknown, key?: string) =>
  srv.api("POST", `/forms/${formId}/submissions`, { key: null, body, headers: key ? { "Idempotency-Key": key } : {} });
/** A browser post, its 303 not followed. */
const submitUrlencoded = (formId: string, fields: Record<string, string>, key: string) =>
  fetch(`${srv.baseUrl}/forms/${formId}/submissions`, {
    method: "POST",
    body: new URLSearchParams(fields),
    headers: { "Idempotency-Key": key },
    redirect: "manual",
  });
const contactsByEmail = async (email: string) => (await srv.api("GET", "/contacts", { query: { email } })).json.data as unknown[];
const eventsOf = async (type: string) => ((await srv.api("GET", "/events")).json.data as Array<{ event: string }>).filter((e) => e.event === type);

beforeAll(async () => {
  srv = await startServer();
}, 60_000);
afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("web-form submissions with an Idempotency-Key", () => {
  test("a repeat with the same key and body answers the stored 201 with Idempotent-Replayed: true and writes nothing", async () => {
    const form = await createForm();
    const key = crypto.randomUUID();
    const before = (await eventsOf("web_form.submitted")).length;
    const first = await submit(form.id, { email: "idem-form@example.com", firstName: "Ida" }, key);
    expectStatus(first, 201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const repeat = await submit(form.id, { email: "idem-form@example.com", firstName: "Ida" }, key);
    expectStatus(repeat, 201);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(repeat.json).toEqual(first.json);
    expect(await contactsByEmail("idem-form@example.com")).toHaveLength(1);
    expect((await eventsOf("web_form.submitted")).length).toBe(before + 1);
  });

  test("the same key with another body is 422 ERR_IDEMPOTENCY_KEY_REUSED naming Idempotency-Key", async () => {
    const form = await createForm();
    const key = crypto.randomUUID();
    expectStatus(await submit(form.id, { email: "reuse-a@example.com" }, key), 201);
    const other = await submit(form.id, { email: "reuse-b@example.com" }, key);
    expectError(other, "ERR_IDEMPOTENCY_KEY_REUSED");
    expect(other.json.fieldName).toBe("Idempotency-Key");
    expect(await contactsByEmail("reuse-b@example.com")).toHaveLength(0);
  });

  test("keys belong to their form: the same value sent to another form runs anew", async () => {
    const [a, b] = [await createForm(), await createForm()];
    const key = crypto.randomUUID();
    const first = await submit(a.id, { email: "two-forms@example.com" }, key);
    const second = await submit(b.id, { email: "two-forms@example.com" }, key);
    expectStatus(first, 201);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(second.json.submissionId).not.toBe(first.json.submissionId);
  });

  test("a browser post's 303 to the redirect URL is replayed as it was", async () => {
    const form = await createForm("https://example.com/thanks");
    const key = crypto.randomUUID();
    const first = await submitUrlencoded(form.id, { email: "redirect-idem@example.com" }, key);
    expect(first.status).toBe(303);
    const repeat = await submitUrlencoded(form.id, { email: "redirect-idem@example.com" }, key);
    expect(repeat.status).toBe(303);
    expect(repeat.headers.get("location")).toBe("https://example.com/thanks");
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(await contactsByEmail("redirect-idem@example.com")).toHaveLength(1);
  });

  test("a refused submission stores no answer: after fixing the body, the same key runs", async () => {
    const form = await createForm();
    const key = crypto.randomUUID();
    const refused = await submit(form.id, { email: "not an email" }, key);
    expectError(refused, "ERR_FORM_VALIDATION");
    expectStatus(await submit(form.id, { email: "fixed-idem@example.com" }, key), 201);
  });

  test("without a key, two identical submissions are two submissions", async () => {
    const form = await createForm();
    const first = await submit(form.id, { email: "no-key@example.com" });
    const second = await submit(form.id, { email: "no-key@example.com" });
    expectStatus(first, 201);
    expectStatus(second, 201);
    expect(second.json.submissionId).not.toBe(first.json.submissionId);
  });
});
