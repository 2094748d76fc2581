/**
 * The reference page's "Test request" sends an operation's examples as they are (docs/api.md
 * §16.1): every write operation's request example must work in a fresh project, on the first
 * click, without editing. Ids a fresh project cannot have (a webhook's, a merge's, a form's)
 * are taken from what the earlier steps made, as someone trying the reference would.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let p: ProjectInfo;
// deno-lint-ignore no-explicit-any
let doc: any;

beforeAll(async () => {
  srv = await startServer({});
  p = await srv.newProject({ name: "examples" });
  doc = await (await fetch(`${srv.origin}/v1/openapi.json`)).json();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

interface Operation {
  method: string;
  path: string;
  example: unknown;
  query: Record<string, string>;
}

/** Every write operation (not GET) by operationId: its request body's example and the required query parameters' examples. */
function writeOperations(): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (method === "get" || typeof op !== "object" || !op?.operationId) continue;
      const query = Object.fromEntries(
        (op.parameters ?? []).filter((q: any) => q.in === "query" && q.required).map((q: any) => [q.name, String(q.example ?? q.schema?.example)]),
      );
      out.set(op.operationId, { method: method.toUpperCase(), path, example: op.requestBody?.content?.["application/json"]?.example, query });
    }
  }
  return out;
}

/** Sends operation `id` with its example; `params` fill the path where its own example cannot exist. */
async function send(ops: Map<string, Operation>, id: string, params: Record<string, string> = {}) {
  const op = ops.get(id)!;
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? pathExample(id, name));
  return srv.api(op.method, path, { key: p.key, body: op.example, query: op.query });
}

const pathExample = (operationId: string, name: string): string => {
  const [path, item] = Object.entries<any>(doc.paths).find(([, item]) => Object.values<any>(item).some((op) => op?.operationId === operationId))!;
  const op = Object.values<any>(item).find((o) => o?.operationId === operationId);
  const param = [...(item.parameters ?? []), ...(op.parameters ?? [])].find((q: any) => q.in === "path" && q.name === name);
  const value = param?.example ?? param?.schema?.example;
  if (value === undefined) throw new Error(`${path}: no example for {${name}}`);
  return String(value);
};

test("'Create a contact' succeeds with its example as it is in a fresh project, without a contactTypeId no project has", async () => {
  const ops = writeOperations();
  const create = ops.get("createContact")!;
  expect(create.example).not.toHaveProperty("contactTypeId");
  const res = await send(ops, "createContact");
  expect(res.status).toBe(201);
  expect(res.json.contactType.name).toBe("Customer"); // the project's default type (docs/api.md §10.5)
});

test("every write operation's request example is answered 2xx in a fresh project, run in the order someone trying the reference would", async () => {
  const ops = writeOperations();
  const fresh = await srv.newProject({ name: "examples-fresh" });
  p = fresh;
  const results: Record<string, number> = {};
  const run = async (id: string, params?: Record<string, string>) => {
    const res = await send(ops, id, params);
    results[id] = res.status;
    if (res.status >= 300) throw new Error(`${id}: ${res.status} ${res.text}`);
    return res.json;
  };
  await run("createContact"); // CR-1
  await run("upsertContact");
  await run("updateContact");
  await run("createInteractionLog");
  await run("batchInteractions");
  await run("batchContacts"); // CR-2 (grace@example.com), which the merge example names
  const merge = await run("mergeContacts");
  await run("undoMerge", { mergeId: merge.merge.id });
  const hook = await run("createWebhook");
  await run("updateWebhook", { id: hook.id });
  await run("rotateWebhookSecret", { id: hook.id });
  await run("redeliverWebhookEvents", { id: hook.id });
  await run("deleteWebhook", { id: hook.id });
  await run("deleteContact");
  await run("restoreContact");
  const form = await srv.cli(["form", "create", "--project", fresh.id, "--name", "Examples", "--fields", "email,firstName,address.city", "--json"]);
  const submitted = await send(ops, "submitWebForm", { formId: form.id });
  results.submitWebForm = submitted.status;
  expect(submitted.status).toBeLessThan(300);

  // Every write operation with a body example was sent (testWebhook sends a request out and has no body).
  const withExamples = [...ops].filter(([, op]) => op.example !== undefined).map(([id]) => id);
  expect(withExamples.filter((id) => !(id in results))).toEqual([]);
}, 60_000);
