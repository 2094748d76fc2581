/**
 * Erasing a person (docs/import-export.md §3), black box: a person with every kind of data the service
 * keeps (fields, custom fields, tags, notes, interaction logs, a web-form submission, a
 * relabel, an Idempotency-Key answer, webhook deliveries sent and pending) is erased with
 * the real CLI, then looked for through every API answer, every webhook body sent after the
 * erase, and every table of the database. A second contact must come through untouched.
 *
 * Pending deliveries without a sleep: a subscription's receiver holds its first 4 requests
 * (4 deliveries in flight is the per-subscription cap, docs/webhooks.md §2), so every later event's
 * delivery to it stays pending until the receiver lets go, after the erase.
 */
import { PAIR } from "../../src/contacts/search/pair-terms.ts";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { until } from "../helpers/until.ts";
import { cannedPerson, databaseHits, eventsAbout, expectErasedEvent, hitsIn, ids, type Person } from "./erase-person.ts";

setDefaultTimeout(60_000);
const WAIT_MS = 30_000;

let srv: ServerHandle;
let p: ProjectInfo;
let person: Person;
/** The holding receiver (every delivery to it after the first 4 stays pending) and the one that got everything before the erase. */
let held: Receiver;
let echo: Receiver;
let heldHook: string;
let echoHook: string;
/** The contactId before the relabel, and after. */
let oldId: string;
const NEW_ID = "CR-5000";
let other: any;
let otherBefore: any;
let eventsBefore: any[];
let aboutBefore: any[];
/** What the database held before the erase: table → needles found in it. */
let tracesBefore: Map<string, string[]>;
/** The person's rows counted in the database before the erase. */
let rowsBefore: { searchTerms: number; tagLinks: number };
let erasure: { exitCode: number; stdout: string; stderr: string };
let createKeyHeader: string;
let noteKeyHeader: string;
let createBody: Record<string, unknown>;
let noteBody: Record<string, unknown>;

/** The queries of GET /contacts that found the person before the erase (checked then). */
const finds = (): Record<string, string>[] => [
  { email: person.email },
  { phone: person.phone },
  { search: person.firstName },
  { search: person.lastName },
  { search: person.email.slice(0, 12) },
  { search: NEW_ID },
  { tag: "donor" },
];

const call = (method: string, path: string, opts: Parameters<ProjectInfo["api"]>[2] = {}) => p.api(method, path, opts);

beforeAll(async () => {
  srv = await startServer({
    env: "sandbox",
    // The held requests stay open for the whole setup; nothing here waits on a retry.
    extraEnv: { CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "300000" },
  });
  p = await srv.newProject({ name: "erase" });
  person = cannedPerson();
  await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Nickname", "--type", "text", "--json"]);
  const form = await srv.cli(["form", "create", "--project", p.id, "--name", "Newsletter", "--fields", "email,firstName,address.city", "--json"]);

  held = await startReceiver({ status: 200, hold: true });
  // A receiver that echoes what it got about the person, as a careless one might: its answers are stored (docs/webhooks.md §2).
  echo = await startReceiver([{ when: { bodyIncludes: person.email }, reply: { status: 200, body: `received ${person.email} ${person.lastName}` } }, { reply: { status: 200 } }]);
  heldHook = (await call("POST", "/webhooks", { body: { url: held.url, events: ["*"], description: "held" } })).json.id;
  echoHook = (await call("POST", "/webhooks", { body: { url: echo.url, events: ["*"], description: "echo" } })).json.id;
  for (let i = 0; i < 4; i++) expectStatus(await call("POST", "/contacts", { body: { firstName: `Blocker${i}`, email: `blocker${i}@example.com` } }), 201);
  await held.waitUntil(() => held.inFlight() >= 4, WAIT_MS, "4 deliveries held");

  const otherRes = await call("POST", "/contacts", {
    body: { firstName: "Otto", lastName: "Otherman", email: "otto@example.com", phone: "+442079460000", tags: ["vip"], notes: "the one who stays" },
  });
  expectStatus(otherRes, 201);
  other = otherRes.json;

  // The person, created with an Idempotency-Key under one API key (replayed after the erase).
  createBody = person.createBody;
  createKeyHeader = `erase-create-${crypto.randomUUID()}`;
  const created = await call("POST", "/contacts", { key: p.key, body: createBody, headers: { "Idempotency-Key": createKeyHeader } });
  expectStatus(created, 201);
  oldId = created.json.contactId;
  expectStatus(await call("PATCH", `/contacts/${oldId}`, { body: { notes: `${person.notes} Updated.`, tags: ["vip", "newsletter", "donor"] } }), 200);
  noteBody = { type: "note", note: `Called ${person.firstName} ${person.lastName} about the renewal` };
  noteKeyHeader = `erase-note-${crypto.randomUUID()}`;
  expectStatus(await call("POST", `/contacts/${oldId}/interactions`, { key: p.key, body: noteBody, headers: { "Idempotency-Key": noteKeyHeader } }), 201);
  const callType = (await call("GET", "/interaction-types")).json.data.find((t: any) => t.name === "Call");
  expectStatus(await call("POST", `/contacts/${oldId}/interactions`, { body: { interactionTypeId: callType.id, fields: { outcome: `spoke to ${person.firstName}`, phone: person.phone } } }), 201);
  // The web form, for the same email: updates the contact (contact.updated, web_form.submitted).
  const submitted = await call("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: person.email, firstName: person.firstName, "address.city": `${person.city} Heights` } });
  expectStatus(submitted, 201);
  // The relabel: events before it name the old id.
  expectStatus(await call("PATCH", `/contacts/${oldId}`, { body: { contactId: NEW_ID } }), 200);
  expectStatus(await call("PATCH", `/contacts/${NEW_ID}`, { body: { subscribed: true } }), 200);
  expectStatus(await call("POST", `/contacts/${NEW_ID}/interactions`, { body: { type: "note", note: `Met ${person.firstName} at ${person.street}` } }), 201);

  // Before: the person is found everywhere the tests look afterwards (so their "not found" means something).
  for (const query of finds()) expect((await call("GET", "/contacts", { query })).json.data.map(ids), JSON.stringify(query)).toEqual([NEW_ID]);
  eventsBefore = (await walk(p.api, "/events", { limit: 200 })).items;
  aboutBefore = eventsAbout(eventsBefore, [oldId, NEW_ID]);
  expect(aboutBefore.map((e) => e.event).sort()).toEqual(
    ["contact.created", ...Array(4).fill("contact.updated"), ...Array(3).fill("interaction_log.created"), "web_form.submitted"].sort(),
  );
  // Every event about the person reached the echoing receiver and its answer is recorded.
  await until(
    async () => {
      const { items } = await walk(p.api, `/webhooks/${echoHook}/attempts`, { limit: 200 });
      return aboutBefore.every((e) => items.some((a: any) => a.eventId === e.id && a.statusCode === 200 && a.responseSnippet?.includes(person.email)));
    },
    { timeoutMs: WAIT_MS, what: "the echoing receiver's answers about the person" },
  );
  expect(held.requests).toHaveLength(4);
  otherBefore = (await call("GET", `/contacts/${other.contactId}`)).json;

  const side = await openSideDatabase(srv.env, { readonly: true });
  try {
    tracesBefore = await databaseHits(side, person.needles);
    const row = await side.get<{ id: number }>("SELECT id FROM contacts WHERE project_id = ? AND contact_number = ?", p.id, 5000);
    const countOf = async (table: string, where = "", ...params: unknown[]) =>
      Number((await side.get<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE contact_id = ?${where}`, row!.id, ...params))!.n);
    // The contact's own terms: its pair terms are the index's rows, made of them, and not counted (src/contacts/search/pair-terms.ts).
    rowsBefore = { searchTerms: await countOf("contact_search_terms", " AND substr(term, 1, 1) <> ?", PAIR), tagLinks: await countOf("contact_tags") };
    expect(await countOf("contact_search_terms", " AND substr(term, 1, 1) = ?", PAIR)).toBeGreaterThan(0);
  } finally {
    await side.close();
  }

  erasure = await srv.cliRaw(["contact", "erase", "--project", p.id, NEW_ID, "--json"]);
}, 180_000);

afterAll(async () => {
  await held?.release();
  await held?.stop();
  await echo?.stop();
  await srv?.stop();
}, 60_000);

describe("crm contact erase --json", () => {
  test("exits 0 and prints one JSON line: the contact, its project and time, and what was removed and scrubbed", () => {
    expect(erasure.exitCode, erasure.stderr).toBe(0);
    const lines = erasure.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!);
    expect(out).toEqual({
      contactId: NEW_ID,
      projectId: p.id,
      erasedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/),
      removed: { interactionLogs: 3, tagLinks: 3, searchTerms: rowsBefore.searchTerms, formSubmissions: 1 },
      // 9 events; each pending for the held subscription; the create's and the note's stored answers; the echo's 9 answers.
      scrubbed: { events: 9, pendingDeliveries: 9, idempotentAnswers: 2, deliveryResponses: 9 },
    });
    expect(rowsBefore.tagLinks).toBe(3);
    expect(rowsBefore.searchTerms).toBeGreaterThan(0);
  });
});

describe("the API after the erase", () => {
  test("the contact is 404 under its id and under its id before the relabel, and so are its interaction logs", async () => {
    for (const id of [NEW_ID, oldId]) {
      expectError(await call("GET", `/contacts/${id}`), "ERR_NOT_FOUND");
      expectError(await call("GET", `/contacts/${id}/interactions`), "ERR_NOT_FOUND");
      expectError(await call("PATCH", `/contacts/${id}`, { body: { notes: "x" } }), "ERR_NOT_FOUND");
    }
  });

  test("no list or filter returns it: all contacts, email, phone, name search, email search, tag", async () => {
    const all = (await walk(p.api, "/contacts", { limit: 200 })).items.map(ids);
    expect(all).not.toContain(NEW_ID);
    expect(all).toContain(other.contactId);
    for (const query of finds()) {
      const res = await call("GET", "/contacts", { query });
      expectStatus(res, 200);
      expect(res.json.data, JSON.stringify(query)).toEqual([]);
    }
    expect((await call("GET", "/contacts", { query: { tag: "vip" } })).json.data.map(ids)).toEqual([other.contactId]);
  });

  test("the other contact is exactly as it was", async () => {
    expect((await call("GET", `/contacts/${other.contactId}`)).json).toEqual(otherBefore);
  });

  test("no answer of the API holds the person's data: no list, filter or contact shows it", async () => {
    const answers = [
      (await call("GET", "/contacts", { query: { limit: 200 } })).text,
      (await call("GET", "/contacts", { query: { search: person.firstName.slice(0, 5) } })).text,
      (await call("GET", `/contacts/${other.contactId}`)).text,
      (await call("GET", `/contacts/${other.contactId}/interactions`)).text,
    ];
    for (const text of answers) expect(hitsIn(text, person.needles)).toEqual([]);
  });
});

describe("stored events", () => {
  test("the erase fired one contact.erased carrying only the contactId, and no event was removed (docs/api.md §19.4)", async () => {
    const after = (await walk(p.api, "/events", { limit: 200 })).items;
    const erased = after.filter((e) => e.event === "contact.erased");
    expect(erased.map((e) => e.data)).toEqual([{ contactId: NEW_ID }]);
    expect(after.filter((e) => e.event !== "contact.erased").map((e) => `${e.id} ${e.event}`)).toEqual(eventsBefore.map((e) => `${e.id} ${e.event}`));
  });

  test("GET /events, every page, shows none of the person's data", async () => {
    const { pages } = await walk(p.api, "/events", { limit: 3 });
    expect(pages.length).toBeGreaterThan(3);
    for (const page of pages) expect(hitsIn(JSON.stringify(page), person.needles)).toEqual([]);
  });

  // The service has no GET /events/{id} (docs/webhooks.md §1): the log is where an event is read.
  test("each event about the person is still in the log with its id, type and time; its contact fields are null but contactId", async () => {
    const after = (await walk(p.api, "/events", { limit: 200 })).items;
    for (const before of aboutBefore) {
      const now = after.find((e) => e.id === before.id);
      expect(now, before.id).toBeDefined();
      expect(hitsIn(JSON.stringify(now), person.needles)).toEqual([]);
      expectErasedEvent(now, before);
    }
  });

  test("events about the other contact are unchanged", async () => {
    const after = (await walk(p.api, "/events", { limit: 200 })).items;
    const otherEvents = eventsAbout(eventsBefore, [other.contactId]);
    expect(otherEvents.length).toBeGreaterThan(0);
    for (const e of otherEvents) expect(after.find((a) => a.id === e.id)).toEqual(e);
  });
});

describe("idempotent answers", () => {
  test("replaying the create's Idempotency-Key answers the stored 201 without the person's data", async () => {
    const replay = await call("POST", "/contacts", { key: p.key, body: createBody, headers: { "Idempotency-Key": createKeyHeader } });
    expectStatus(replay, 201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(hitsIn(replay.text, person.needles)).toEqual([]);
    expect(replay.json.contactId).toBe(oldId);
    for (const key of ["firstName", "lastName", "email", "phone", "businessName", "notes", "address", "customFields", "tags"]) {
      expect(replay.json[key], key).toBeNull();
    }
  });

  test("replaying the note's Idempotency-Key answers without the note", async () => {
    const replay = await call("POST", `/contacts/${oldId}/interactions`, { key: p.key, body: noteBody, headers: { "Idempotency-Key": noteKeyHeader } });
    expect(hitsIn(replay.text, person.needles)).toEqual([]);
    expectStatus(replay, 201);
    expect(replay.json).toMatchObject({ contactId: oldId, note: null });
  });
});

describe("webhook deliveries", () => {
  test("the deliveries pending at the erase send the scrubbed bodies once the receiver answers", async () => {
    await held.release();
    const wanted = aboutBefore.map((e) => e.id);
    await held.waitUntil((reqs) => wanted.every((id) => reqs.some((r) => r.json?.id === id)), WAIT_MS, "every event about the person");
    for (const id of wanted) {
      const [req] = held.forEvent(id);
      expect(hitsIn(req!.text, person.needles), req!.text).toEqual([]);
      expectErasedEvent(req!.json, aboutBefore.find((e) => e.id === id));
    }
  });

  test("no delivery after the erase carries the person's data, and none is of an event newer than the erase", async () => {
    await until(async () => (await walk(p.api, `/webhooks/${heldHook}/attempts`, { limit: 200 })).items.length >= eventsBefore.length, {
      timeoutMs: WAIT_MS,
      what: "every event's delivery to the held receiver",
    });
    const known = new Set(eventsBefore.map((e) => e.id));
    for (const req of held.requests) {
      expect(hitsIn(req.text, person.needles)).toEqual([]);
      // The one event newer than the erase is contact.erased, which carries the contactId alone.
      if (req.json.event === "contact.erased") expect(req.json.data).toEqual({ contactId: NEW_ID });
      else expect(known.has(req.json.id)).toBe(true);
    }
  });

  test("the echoing receiver's stored answers about the person are gone from the attempt log", async () => {
    const { items } = await walk(p.api, `/webhooks/${echoHook}/attempts`, { limit: 200 });
    expect(hitsIn(JSON.stringify(items), person.needles)).toEqual([]);
    for (const e of aboutBefore) expect(items.find((a: any) => a.eventId === e.id)).toMatchObject({ statusCode: 200, responseSnippet: null });
  });

  test("redelivering an event about the person sends its scrubbed body, same event id, new delivery id", async () => {
    const created = aboutBefore.find((e) => e.event === "contact.created");
    const firstDelivery = held.forEvent(created.id)[0]!.headers["x-service-delivery"];
    held.clear();
    const res = await call("POST", `/webhooks/${heldHook}/redeliver`, { body: { eventIds: [created.id] } });
    expectStatus(res, 202);
    const [req] = await held.waitFor(1, WAIT_MS);
    expect(req!.json.id).toBe(created.id);
    expect(req!.headers["x-service-delivery"]).not.toBe(firstDelivery);
    expect(hitsIn(req!.text, person.needles)).toEqual([]);
    expectErasedEvent(req!.json, created);
  });
});

describe("the number", () => {
  test("is never given again: a new contact gets a higher number", async () => {
    const res = await call("POST", "/contacts", { body: { firstName: "After" } });
    expectStatus(res, 201);
    expect(Number(res.json.contactId.slice(3))).toBeGreaterThan(5000);
  });

  test("a relabel to the erased contactId is 409 ERR_CONFLICT naming contactId, and changes nothing", async () => {
    const before = (await call("GET", `/contacts/${other.contactId}`)).json;
    expectError(await call("PATCH", `/contacts/${other.contactId}`, { body: { contactId: NEW_ID } }), "ERR_CONFLICT", "contactId");
    expect((await call("GET", `/contacts/${other.contactId}`)).json).toEqual(before);
    expectError(await call("GET", `/contacts/${NEW_ID}`), "ERR_NOT_FOUND");
  });
});

describe("the database", () => {
  test("no table holds the person's email, names, phone, address, notes or custom value any more", async () => {
    // The scan saw them before: in the contact, its events, submission, the receiver's echo, its logs and search terms.
    for (const table of ["contacts", "events", "form_submissions", "delivery_attempts"]) expect(tracesBefore.get(table), table).toContain(person.email.toLowerCase());
    expect(tracesBefore.get("interaction_logs"), "interaction_logs").toContain(person.lastName.toLowerCase());
    expect(tracesBefore.get("contact_search_terms")?.length ?? 0).toBeGreaterThan(0);
    const side = await openSideDatabase(srv.env, { readonly: true });
    try {
      expect(Object.fromEntries(await databaseHits(side, person.needles))).toEqual({});
      const erased = await side.all("SELECT * FROM erased_contacts WHERE project_id = ?", p.id);
      expect(erased.map((r: any) => Number(r.contact_number))).toEqual([5000]);
    } finally {
      await side.close();
    }
  });
});

describe("erasing again", () => {
  test("erasing the same contact twice exits 2 naming it, and changes nothing", async () => {
    const before = (await walk(p.api, "/events", { limit: 200 })).items;
    const again = await srv.cliRaw(["contact", "erase", "--project", p.id, NEW_ID, "--json"]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain(NEW_ID);
    expect(again.stdout.trim()).toBe("");
    expect((await walk(p.api, "/events", { limit: 200 })).items).toStrictEqual(before);
  });
});
