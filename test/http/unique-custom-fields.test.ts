/**
 * Unique custom fields (docs/api.md §18.3): no two contacts of a project hold the same
 * trimmed value, from every surface and under races; such a field is an upsert match key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle;
let api: Api;
let field: { id: string; title: string };
let run = 0;
const value = (name: string) => `${name}-${Date.now()}-${run++}`;

beforeAll(async () => {
  srv = await startServer();
  api = srv.api;
  field = await srv.cli(["custom-field", "create", "--project", srv.projectId, "--title", "External ID", "--type", "text", "--unique", "--json"]);
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const create = (v: unknown, extra: Record<string, unknown> = {}) => api("POST", "/contacts", { body: { firstName: "U", customFields: { [field.id]: v }, ...extra } });

describe("unique custom fields", () => {
  test("a second contact with the same trimmed value is 409 ERR_CONFLICT naming customFields.<id>", async () => {
    const v = value("dup");
    expectStatus(await create(v), 201);
    expectError(await create(`  ${v} `), "ERR_CONFLICT", `customFields.${field.id}`);
    // By title too, and a different case is a different value.
    expectError(await api("POST", "/contacts", { body: { firstName: "T", customFields: { "External ID": v } } }), "ERR_CONFLICT", `customFields.${field.id}`);
    expectStatus(await create(v.toUpperCase()), 201);
  });

  test("PATCH to a value another contact holds is 409; its own value, or a freed one, passes", async () => {
    const a = value("a");
    const b = value("b");
    const first = (await create(a)).json;
    const second = (await create(b)).json;
    expectError(await api("PATCH", `/contacts/${second.contactId}`, { body: { customFields: { [field.id]: a } } }), "ERR_CONFLICT", `customFields.${field.id}`);
    expectStatus(await api("PATCH", `/contacts/${first.contactId}`, { body: { lastName: "Same", customFields: { [field.id]: a } } }), 200);
    expectStatus(await api("PATCH", `/contacts/${first.contactId}`, { body: { customFields: { [field.id]: null } } }), 200);
    expectStatus(await api("PATCH", `/contacts/${second.contactId}`, { body: { customFields: { [field.id]: a } } }), 200);
  });

  test("20 concurrent creates with one value make one contact; the others are 409", async () => {
    const v = value("race");
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(v)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(19);
  });

  test("a value longer than 255 characters is 422 on a unique field", async () => {
    expectError(await create("x".repeat(256)), "ERR_FORM_VALIDATION", `customFields.${field.id}`);
  });

  test("PUT ?matchOn=customFields.<title or id> finds the contact by its trimmed value", async () => {
    const v = value("match");
    const created = await api("PUT", "/contacts", { query: { matchOn: "customFields.External ID" }, body: { firstName: "M", customFields: { [field.id]: v } } });
    expectStatus(created, 201);
    const updated = await api("PUT", "/contacts", { query: { matchOn: `customFields.${field.id}` }, body: { lastName: "N", customFields: { "External ID": ` ${v}` } } });
    expectStatus(updated, 200);
    expect(updated.json.contactId).toBe(created.json.contactId);
    const missing = await api("PUT", "/contacts", { query: { matchOn: `customFields.${field.id}` }, body: { firstName: "No value" } });
    expectError(missing, "ERR_FORM_VALIDATION", `customFields.${field.id}`);
  });

  test("a batch refuses the second item holding a value, as the single call would", async () => {
    const v = value("batch");
    const res = await api("POST", "/contacts/batch", { body: { operation: "create", items: [{ customFields: { [field.id]: v }, firstName: "1" }, { customFields: { [field.id]: v }, firstName: "2" }] } });
    expectStatus(res, 200);
    expect(res.json.results.map((r: any) => r.status)).toEqual([201, 409]);
    expect(res.json.results[1].error).toMatchObject({ code: "ERR_CONFLICT", fieldName: `customFields.${field.id}` });
  });

  test("an erased contact's value is free again", async () => {
    const v = value("erase");
    const c = (await create(v)).json;
    await srv.cli(["contact", "erase", c.contactId, "--project", srv.projectId, "--json"]);
    expectStatus(await create(v), 201);
  });
});
