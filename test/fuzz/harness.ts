/**
 * The fuzzed server: one sandbox server on loopback with two projects whose rate limits are
 * raised (A: contacts, interactions, forms; B: webhooks, so fuzzed subscriptions never fan
 * out contact events), reference data, a form, seeded records and a loopback webhook sink.
 */
import http from "node:http";
import type { Server } from "bun";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import type { FuzzIds } from "./arbitraries.ts";
import { violations, type Answer } from "./invariants.ts";
import { seenCursors, type Auth, type FuzzRequest } from "./requests.ts";

export interface FuzzTarget {
  server: ServerHandle;
  ids: FuzzIds;
  keys: Record<Auth, string | null>;
  stop: () => Promise<void>;
}

export const DEFAULT_SEED = 20240611;
/** FUZZ_SEED overrides the fixed default seed. */
export const fuzzSeed = (): number => (process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : DEFAULT_SEED);

const FAST = { rateLimitPerMinute: 100_000_000, contactCreatesPerHour: 100_000_000 };
const CUSTOM_FIELDS: [string, string, string?][] = [
  ["Nickname", "text"], ["Bio", "textarea"], ["Score", "number"], ["Birthday", "date"], ["VIP", "checkbox"],
  ["Homepage", "url"], ["Alt email", "email"], ["Alt phone", "phone"], ["Size", "select", "S,M,L"],
  ["Tier", "radio", "gold,silver"], ["Colors", "multiselect", "red,blue"], ["Photo", "image"], ["Offers", "offering-list"],
];

export async function startFuzzTarget(): Promise<FuzzTarget> {
  const sink: Server<undefined> = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(null, { status: 204 }) });
  const server = await startServer({ env: "sandbox" });
  const a = await server.newProject(FAST);
  const b = await server.newProject(FAST);
  const cli = (args: string[]) => server.cli([...args, "--project", a.id, "--json"]);
  const contactType = await cli(["contact-type", "create", "--category", "Lead", "--name", "Prospect"]);
  const interactionType = await cli(["interaction-type", "create", "--name", "Call"]);
  const fields: any[] = [];
  for (const [title, type, options] of CUSTOM_FIELDS) fields.push(await cli(["custom-field", "create", "--title", title, "--type", type, ...(options ? ["--options", options] : [])]));
  const formFields = ["email", "firstName", "lastName", "phone", "businessName", "website", "notes", "subscribed", "address.city", "address.zip", ...fields.filter((f) => f.writable).map((f) => f.id as string)];
  const form = await cli(["form", "create", "--name", "Fuzz form", "--fields", formFields.join(",")]);
  // The server reads reference data and forms from the database on each request: no wait needed.

  const keyA = a.key;
  const keyB = b.key;
  const post = async (key: string, path: string, body: unknown) => {
    const res = await fetch(`${server.baseUrl}${path}`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const json: any = await res.json();
    if (res.status >= 300) throw new Error(`seed ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const get = async (key: string, path: string) => (await (await fetch(`${server.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } })).json()) as any;
  const contactIds: string[] = [];
  for (let i = 0; i < 12; i++) {
    const c = await post(keyA, "/contacts", { firstName: `Seed${i}`, email: `seed${i}@example.com`, phone: `+1415555${String(1000 + i)}`, tags: ["vip", `t${i % 3}`], customFields: { Nickname: `n${i}` } });
    contactIds.push(c.contactId);
    if (i % 3 === 0) await post(keyA, `/contacts/${c.contactId}/interactions`, { type: "note", note: "seed", uniqueIdentifier: "u1" });
  }
  const sinkUrl = `http://127.0.0.1:${sink.port}/hook`;
  const webhookIds: string[] = [];
  for (let i = 0; i < 3; i++) webhookIds.push((await post(keyB, "/webhooks", { url: sinkUrl, events: ["*"], description: `seed ${i}` })).id);
  for (let i = 0; i < 3; i++) await post(keyB, "/contacts", { firstName: `B${i}` });
  const tags = (await get(keyA, "/tags?limit=200")).data as { id: string; name: string }[];
  const events = (await get(keyB, "/events?limit=200")).data as { id: string }[];

  const ids: FuzzIds = {
    contactIds, contactTypeIds: [contactType.id], interactionTypeIds: [interactionType.id],
    customFieldIds: fields.map((f) => f.id), customFieldTitles: fields.map((f) => f.title),
    tagNames: tags.map((t) => t.name), tagIds: tags.map((t) => t.id), webhookIds, eventIds: events.map((e) => e.id),
    formId: form.id, formFields, sinkUrl,
  };
  const readKey = (await server.createKey({ scopes: ["contacts:read"], projectId: a.id })).key;
  const keys: Record<Auth, string | null> = { a: keyA, "a-read": readKey, b: keyB, none: null, bad: `crm_live_${"A".repeat(46)}` };
  return {
    server, ids, keys,
    stop: async () => {
      await server.stop();
      sink.stop(true);
    },
  };
}

const encoder = new TextEncoder();

/** Sends one request; form posts go out from their own loopback source address. */
export async function send(t: FuzzTarget, req: FuzzRequest): Promise<Answer> {
  const headers: Record<string, string> = { ...req.headers };
  const key = t.keys[req.auth];
  if (key) headers.Authorization = `Bearer ${key}`;
  const body = typeof req.body === "string" ? encoder.encode(req.body) : req.body;
  if (!req.sourceIp) {
    const res = await fetch(t.server.origin + req.path, { method: req.method, headers, body: body as BodyInit | undefined, redirect: "manual", signal: AbortSignal.timeout(30_000) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  const url = new URL(t.server.origin);
  if (body) headers["Content-Length"] = String(body.length);
  return new Promise((resolve, reject) => {
    const r = http.request({ host: url.hostname, port: url.port, path: req.path, method: req.method, headers, localAddress: req.sourceIp, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
        resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString("utf8") });
      });
      res.on("error", reject);
    });
    r.on("timeout", () => r.destroy(new Error("no answer within 30 s")));
    r.on("error", reject);
    r.end(body ? Buffer.from(body) : undefined);
  });
}

export async function healthy(t: FuzzTarget): Promise<boolean> {
  try {
    const res = await fetch(`${t.server.origin}/healthz`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** The server's log output (JSON lines on stdout, anything on stderr) since `from`, errors only. */
export function serverErrors(t: FuzzTarget, from: { out: number; err: number }): string {
  const out = t.server.stdout().slice(from.out).split("\n").filter((l) => l.includes('"level":"error"'));
  return [...out, t.server.stderr().slice(from.err)].join("\n").trim().slice(0, 3000);
}

export const logMark = (t: FuzzTarget) => ({ out: t.server.stdout().length, err: t.server.stderr().length });

export interface CaseResult {
  answer?: Answer;
  problems: string[];
}

let cursorSlot = 0;

/** One case: send, check the invariants, remember any cursor for later cases. */
export async function runCase(t: FuzzTarget, req: FuzzRequest, checkHealth = false): Promise<CaseResult> {
  let answer: Answer;
  try {
    answer = await send(t, req);
  } catch (error) {
    const alive = await healthy(t);
    return { problems: [`no answer: ${String(error)}${alive ? "" : " (server no longer answers /healthz)"}`] };
  }
  const problems = violations(req, answer);
  if (answer.status === 200 && answer.text.includes('"nextCursor":"')) {
    const cursor = /"nextCursor":"([^"]+)"/.exec(answer.text)?.[1];
    if (cursor) seenCursors[cursorSlot++ % 200] = cursor;
  }
  if (checkHealth && !(await healthy(t))) problems.push("server no longer answers /healthz");
  return { answer, problems };
}
