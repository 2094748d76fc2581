/**
 * The console's "Erase" action on a contact's page (docs/admin.md §3, docs/import-export.md §3): a confirmation page
 * that says what goes and that it cannot be undone, the contactId typed to confirm, a CSRF
 * token as every console form; then the same erase as the CLI, and a notice on the list
 * naming what was removed. Checked through the API and the event log, on the real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { pageText, signedInAdmin, type AdminClient } from "../helpers/admin.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { cannedPerson, databaseHits, eventsAbout, expectErasedEvent, hitsIn, type Person } from "./erase-person.ts";

setDefaultTimeout(60_000);

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;
let base: string;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
  p = await srv.newProject({ name: "console-erase" });
  base = `/admin/projects/${p.id}/contacts`;
  await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Nickname", "--type", "text", "--json"]);
}, 60_000);
afterAll(() => srv?.stop(), 60_000);

/** A person with two logs and two tags (contact.created, 2 × interaction_log.created). */
async function personWithLogs(): Promise<{ person: Person; contactId: string }> {
  const person = cannedPerson();
  const res = await p.api("POST", "/contacts", { body: person.createBody });
  expectStatus(res, 201);
  const contactId = res.json.contactId as string;
  for (const note of [`Met ${person.firstName}`, `Wrote to ${person.email}`]) {
    expectStatus(await p.api("POST", `/contacts/${contactId}/interactions`, { body: { type: "note", note } }), 201);
  }
  return { person, contactId };
}

describe("the Erase action", () => {
  test("the contact's page links to Erase; its page says what will be removed, that it cannot be undone, and asks for the contactId", async () => {
    const { contactId } = await personWithLogs();
    const page = await admin.get(`${base}/${contactId}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`<a [^>]*href="${base}/${contactId}/erase"[^>]*>\\s*Erase\\s*</a>`));
    const confirm = await admin.get(`${base}/${contactId}/erase`);
    expect(confirm.status).toBe(200);
    const text = pageText(confirm.text);
    expect(text).toContain("This cannot be undone.");
    expect(text).toContain("2 interaction logs");
    expect(text).toContain("2 tag links");
    expect(text).toContain("0 form submissions");
    expect(text).toContain("3 stored events");
    expect(text).toContain("Not reached");
    expect(confirm.text).toMatch(new RegExp(`<label for="f-confirm">Type ${contactId} to confirm</label>`));
    expect(confirm.text).toContain('name="_csrf"');
    expect(confirm.text).toMatch(new RegExp(`<form method="post" action="${base}/${contactId}/erase"`));
    // Looking erases nothing.
    expectStatus(await p.api("GET", `/contacts/${contactId}`), 200);
  });

  test("a wrong or empty typed id is refused (422) at its field, and nothing is erased", async () => {
    const { contactId, person } = await personWithLogs();
    const eventsBefore = (await walk(p.api, "/events", { limit: 200 })).items;
    await admin.get(`${base}/${contactId}/erase`);
    for (const typed of ["", "CR-0", contactId.toLowerCase(), `${contactId}0`]) {
      const res = await admin.post(`${base}/${contactId}/erase`, { confirm: typed });
      expect(res.status, typed).toBe(422);
      expect(pageText(res.text)).toContain("Nothing was erased.");
      expect(res.text).toContain('id="f-confirm-error"');
    }
    expect((await p.api("GET", `/contacts/${contactId}`)).json.email).toBe(person.email);
    expect((await walk(p.api, "/events", { limit: 200 })).items).toStrictEqual(eventsBefore);
  });

  test("without the form's CSRF token the post is refused (403) and nothing is erased", async () => {
    const { contactId } = await personWithLogs();
    const res = await admin.post(`${base}/${contactId}/erase`, { confirm: contactId, _csrf: "forged" });
    expect(res.status).toBe(403);
    expectStatus(await p.api("GET", `/contacts/${contactId}`), 200);
  });

  test("the right id erases: back to the list with a notice naming what was removed; the contact's pages are 404", async () => {
    const { contactId, person } = await personWithLogs();
    const eventsBefore = (await walk(p.api, "/events", { limit: 200 })).items;
    const about = eventsAbout(eventsBefore, [contactId]);
    expect(about).toHaveLength(3);
    await admin.get(`${base}/${contactId}/erase`);
    const res = await admin.post(`${base}/${contactId}/erase`, { confirm: ` ${contactId} ` });
    expect(res.status, res.text.slice(0, 1000)).toBe(303);
    expect(res.location!.startsWith(`${base}?`)).toBe(true);
    const list = await admin.get(res.location!);
    expect(list.status).toBe(200);
    const notice = /<p class="notice" role="status">([^<]*)<\/p>/.exec(list.text)?.[1];
    expect(notice).toBe(
      `${contactId} was erased. Deleted: the contact, 2 interaction logs, 2 tag links, 0 form submissions and its search terms. ` +
        `Its data was emptied in 3 stored events (0 pending deliveries will send them emptied). Its contact id is never given again.`,
    );
    expect(hitsIn(list.text, person.needles)).toEqual([]);
    expect((await admin.get(`${base}/${contactId}`)).status).toBe(404);
    expect((await admin.get(`${base}/${contactId}/erase`)).status).toBe(404);
    expectError(await p.api("GET", `/contacts/${contactId}`), "ERR_NOT_FOUND");
    // The same erase as the CLI's: contact.erased fired (docs/api.md §19.4), those about it emptied.
    const after = (await walk(p.api, "/events", { limit: 200 })).items;
    expect(after.filter((e) => e.event === "contact.erased").map((e) => e.data)).toStrictEqual([{ contactId }]);
    expect(after.filter((e) => e.event !== "contact.erased").map((e) => e.id)).toStrictEqual(eventsBefore.map((e) => e.id));
    for (const e of about) expectErasedEvent(after.find((x) => x.id === e.id), e);
    const side = await openSideDatabase(srv.env, { readonly: true });
    try {
      expect(Object.fromEntries(await databaseHits(side, person.needles))).toEqual({});
    } finally {
      await side.close();
    }
  });

  test("a second post for an erased contact is the console's 404 page, and the list's notice shows only for a well-formed link", async () => {
    const { contactId } = await personWithLogs();
    await admin.get(`${base}/${contactId}/erase`);
    expect((await admin.post(`${base}/${contactId}/erase`, { confirm: contactId })).status).toBe(303);
    await admin.get(base);
    const again = await admin.post(`${base}/${contactId}/erase`, { confirm: contactId });
    expect(again.status).toBe(404);
    const forged = await admin.get(`${base}?done=erased&contactId=${encodeURIComponent("<b>x</b>")}&logs=1&tagLinks=1&submissions=1&events=1&pending=1`);
    expect(forged.status).toBe(200);
    expect(forged.text).not.toContain('class="notice"');
  });

  test("a contact in the trash is erased from its page too (docs/api.md §19.3): its page links Erase, the confirmation counts its logs, and the erase leaves nothing to restore", async () => {
    const { contactId } = await personWithLogs();
    expectStatus(await p.api("DELETE", `/contacts/${contactId}`), 204);
    const page = await admin.get(`${base}/${contactId}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(new RegExp(`<a [^>]*href="${base}/${contactId}/erase"[^>]*>\\s*Erase\\s*</a>`));
    const confirm = await admin.get(`${base}/${contactId}/erase`);
    expect(confirm.status).toBe(200);
    expect(pageText(confirm.text)).toContain("2 interaction logs");
    const res = await admin.post(`${base}/${contactId}/erase`, { confirm: contactId });
    expect(res.status, res.text.slice(0, 500)).toBe(303);
    expect((await admin.get(`${base}/${contactId}`)).status).toBe(404);
    expectError(await p.api("POST", `/contacts/${contactId}/restore`), "ERR_NOT_FOUND");
  });

  test("an unknown contact's Erase page is the console's 404 page", async () => {
    expect((await admin.get(`${base}/CR-987654/erase`)).status).toBe(404);
    expect((await admin.get(`${base}/nonsense/erase`)).status).toBe(404);
  });
});
