/**
 * Duplicates and merge in the console over HTTP (docs/api.md §20, "Console: a Duplicates page
 * (the groups), a side-by-side comparison with a choice per field, Merge, and Undo from the
 * survivor's timeline"): what each page says, that looking writes nothing, that Merge and
 * Undo carry the CSRF token and ask first, the refusals a person can meet (a contact merged
 * since, a choice the merge refuses, an undo done already or past its 30 days) shown on the
 * page, and a merged-away contact's pages leading to the survivor's. Checked through the
 * API. The browser's view of the same flow: test/browser/admin-duplicates.test.ts.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, createAdminAccount, pageText } from "../helpers/admin.ts";
import { DAY, ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "../helpers/in-process.ts";

setDefaultTimeout(60_000);

const clock = new ManualClock();
let srv: InProcessServer;
let admin: AdminClient;
let account: { email: string; password: string };
let p: InProcessProject;
let base: string;

beforeAll(async () => {
  srv = await startInProcess({ overrides: { clock } });
  account = await createAdminAccount(srv.env);
  admin = new AdminClient(srv.origin);
  await admin.signIn(account.email, account.password);
  p = await srv.newProject({ name: "console-merge" });
  base = `/admin/projects/${p.id}`;
}, 60_000);
afterAll(() => srv?.stop(), 60_000);

/** Two contacts sharing an email (the second's in capitals); the second has a business name, a note and a log. No key is shared with another pair. */
async function pair(tag: string) {
  const email = `ada@${tag}.example`;
  const a = await p.api("POST", "/contacts", { body: { firstName: "Ada", lastName: "Lovelace", email, tags: ["vip"] } });
  const b = await p.api("POST", "/contacts", { body: { firstName: "Ada", lastName: "King", email: email.toUpperCase(), businessName: `Engines ${tag}`, notes: "Prefers email." } });
  expect([a.status, b.status]).toEqual([201, 201]);
  await p.api("POST", `/contacts/${b.json.contactId}/interactions`, { body: { type: "note", note: `log of ${tag}` } });
  return { first: a.json.contactId as string, second: b.json.contactId as string };
}

/** Whether the radio `name` = `value` is checked on the page. */
const checked = (html: string, name: string, value: string) => new RegExp(`<input type="radio" id="[^"]*" name="${name.replace(".", "\\.")}" value="${value}" checked=""`).test(html);

/** The hidden fields of the confirmation's form, as it would post them. */
function hiddenFields(html: string): Record<string, string> {
  const form = html.slice(html.indexOf('aria-label="Merge contacts"'));
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) if (m[1] !== "_csrf") fields[m[1]!] = m[2]!;
  return fields;
}

describe("the Duplicates page", () => {
  test("the project's navigation links to it; it lists each group with its reason, names and emails, and a link to compare", async () => {
    const { first, second } = await pair("listed");
    const page = await admin.get(`${base}/duplicates`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<a href="${base}/duplicates" aria-current="page">Duplicates</a>`);
    const text = pageText(page.text);
    expect(text).toContain(`2 contacts · same email ${second} Ada King · ADA@LISTED.EXAMPLE ${first} Ada Lovelace · ada@listed.example Compare and merge`);
    expect(page.text).toContain(`href="${base}/duplicates/compare?ids=${second}%2C${first}"`);
  });

  test("a cursor that is not the page's own is shown as a refusal, 422", async () => {
    const page = await admin.get(`${base}/duplicates?cursor=nonsense`);
    expect(page.status).toBe(422);
    expect(pageText(page.text)).toContain("There is a problem");
  });
});

describe("compare, confirm, merge", () => {
  test("the comparison keeps the oldest by default and starts each differing field at the merge's default rule; the confirmation writes nothing", async () => {
    const { first, second } = await pair("defaults");
    const page = await admin.get(`${base}/duplicates/compare?ids=${second},${first}`);
    expect(page.status).toBe(200);
    expect(pageText(page.text)).toContain("Compare 2 contacts");
    expect(checked(page.text, "survivor", first)).toBe(true);
    expect(checked(page.text, "f.lastName", first)).toBe(true); // the survivor's non-empty value
    expect(checked(page.text, "f.businessName", second)).toBe(true); // the survivor has none
    expect(checked(page.text, "f.tags", "all")).toBe(true); // the union
    expect(page.text).not.toContain('name="f.firstName"'); // the same in both: nothing to choose
    const confirm = await admin.get(`${base}/duplicates/merge?ids=${first},${second}&survivor=${first}&f.lastName=${second}`);
    expect(confirm.status).toBe(200);
    const text = pageText(confirm.text);
    expect(text).toContain(`Merge 1 contact into ${first}`);
    expect(text).toContain("Undo is possible for 30 days");
    expect(text).toContain("Last name King (now: Lovelace)");
    // Only the choice that changes what the merge's rule would keep.
    expect(hiddenFields(confirm.text)).toEqual({ survivor: first, ids: second, "f.lastName": second });
    expect((await p.api("GET", `/contacts/${second}`)).status).toBe(200);
  });

  test("Merge without the form's CSRF token is refused, 403, and nothing is merged", async () => {
    const { first, second } = await pair("csrf");
    const res = await admin.post(`${base}/duplicates/merge`, { _csrf: "forged", survivor: first, ids: second });
    expect(res.status).toBe(403);
    expect((await p.api("GET", `/contacts/${second}`)).status).toBe(200);
  });

  test("Merge merges with the choices, lands on the survivor with a notice, and the merged-away contact's pages lead there", async () => {
    const { first, second } = await pair("merged");
    await admin.get(`${base}/duplicates/merge?ids=${first},${second}&survivor=${first}&f.lastName=${second}`);
    const res = await admin.post(`${base}/duplicates/merge`, { survivor: first, ids: second, "f.lastName": second, "f.notes": first });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${base}/contacts/${first}?done=merged#timeline`);
    const survivor = await p.api("GET", `/contacts/${first}`);
    expect(survivor.json).toMatchObject({ lastName: "King", businessName: "Engines merged", notes: null });
    expect((await p.api("GET", `/contacts/${second}`)).status).toBe(308);
    const page = await admin.get(res.location!);
    const text = pageText(page.text);
    expect(text).toContain("Contacts merged into this one.");
    expect(text).toContain(`${second} was merged into this contact.`);
    expect(page.text).toMatch(/<a class="button secondary" href="[^"]*\/merges\/mrg_[^"]+\/undo">\s*Undo merge\s*<\/a>/);
    for (const path of ["", "/edit", "/erase"]) {
      const away = await admin.get(`${base}/contacts/${second}${path}`);
      expect(`${path} ${away.status} ${away.location}`).toBe(`${path} 303 ${base}/contacts/${first}?done=mergedaway&from=${second}`);
    }
    expect(pageText((await admin.get(`${base}/contacts/${first}?done=mergedaway&from=${second}`)).text)).toContain(`${second} was merged into this contact.`);
    // The merged-away contact's timeline shows where it went (the survivor's page would not show it, so through the API's history).
    expect((await admin.get(`${base}/contacts/CR-999999`)).status).toBe(404);
  });

  test("a contact merged since the comparison: the merge is refused, 409, and the comparison says which one left", async () => {
    const { first, second } = await pair("stale");
    expect((await p.api("POST", `/contacts/${first}/merge`, { body: { contactIds: [second] } })).status).toBe(200);
    await admin.get(`${base}/duplicates`);
    const res = await admin.post(`${base}/duplicates/merge`, { survivor: first, ids: second });
    expect(res.status).toBe(409);
    const text = pageText(res.text);
    expect(text).toContain(`${second} was merged into ${first}.`);
    expect(text).toContain(`${second} is no longer in the contact list`);
  });

  test("a choice the merge refuses (a contact not in it) is shown, 422, and nothing is merged", async () => {
    const { first, second } = await pair("refused");
    const confirm = await admin.get(`${base}/duplicates/merge?ids=${first},${second}&survivor=${first}&f.lastName=CR-999999`);
    expect(confirm.status).toBe(422);
    expect(pageText(confirm.text)).toContain("CR-999999 is not one of the contacts merged.");
    const res = await admin.post(`${base}/duplicates/merge`, { survivor: first, ids: second, "f.lastName": "CR-999999" });
    expect(res.status).toBe(422);
    expect((await p.api("GET", `/contacts/${second}`)).status).toBe(200);
  });

  test("the contact's page links its duplicates to the comparison, keeping it", async () => {
    const { first, second } = await pair("from-contact");
    const page = await admin.get(`${base}/contacts/${second}`);
    expect(page.text).toContain(`href="${base}/duplicates/compare?ids=${second}%2C${first}&amp;survivor=${second}"`);
    expect(pageText(page.text)).toContain(`Compare and merge with ${first}`);
    const compare = await admin.get(`${base}/duplicates/compare?ids=${second},${first}&survivor=${second}`);
    expect(checked(compare.text, "survivor", second)).toBe(true);
  });
});

describe("Undo from the survivor's timeline", () => {
  async function merged(tag: string) {
    const { first, second } = await pair(tag);
    const res = await p.api("POST", `/contacts/${first}/merge`, { body: { contactIds: [second], fields: { lastName: second } } });
    expect(res.status).toBe(200);
    return { first, second, mergeId: res.json.merge.id as string };
  }

  test("Undo merge asks first, then brings the merged contact back; the timeline then says it was undone, and a second undo is refused, 409", async () => {
    const { first, second, mergeId } = await merged("undo");
    const undo = `${base}/contacts/${first}/merges/${mergeId}/undo`;
    expect((await admin.get(`${base}/contacts/${first}`)).text).toContain(`href="${undo}"`);
    const confirm = await admin.get(undo);
    expect(confirm.status).toBe(200);
    expect(pageText(confirm.text)).toContain(`${second} was merged into Ada King (${first})`);
    expect((await p.api("GET", `/contacts/${second}`)).status).toBe(308); // looking undoes nothing
    const forged = await admin.post(undo, { _csrf: "forged" });
    expect(forged.status).toBe(403);
    const res = await admin.post(undo);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${base}/contacts/${first}?done=unmerged#timeline`);
    expect((await p.api("GET", `/contacts/${first}`)).json.lastName).toBe("Lovelace");
    expect((await p.api("GET", `/contacts/${second}`)).json.lastName).toBe("King");
    const page = pageText((await admin.get(res.location!)).text);
    expect(page).toContain("Merge undone: the merged contacts are back.");
    expect(page).toMatch(/Undone \d{4}-\d\d-\d\d/);
    expect((await admin.get(`${base}/contacts/${first}`)).text).not.toContain(`href="${undo}"`);
    await admin.get(undo);
    const again = await admin.post(undo);
    expect(again.status).toBe(409);
    expect(pageText(again.text)).toContain("This merge was undone already.");
  });

  test("a merge of another contact is not found here, 404", async () => {
    const { mergeId } = await merged("elsewhere");
    const other = await p.api("POST", "/contacts", { body: { firstName: "Someone", lastName: "Else" } });
    expect((await admin.get(`${base}/contacts/${other.json.contactId}/merges/${mergeId}/undo`)).status).toBe(404);
    expect((await admin.post(`${base}/contacts/${other.json.contactId}/merges/${mergeId}/undo`)).status).toBe(404);
  });

  test("after 30 days the timeline says the merge can no longer be undone, and an undo is refused, 410", async () => {
    const { first, mergeId } = await merged("expired");
    clock.advance(31 * DAY);
    admin = new AdminClient(srv.origin); // the session may have ended meanwhile
    await admin.signIn(account.email, account.password);
    const page = await admin.get(`${base}/contacts/${first}`);
    expect(pageText(page.text)).toMatch(/Can no longer be undone: its 30 days ended \d{4}-/);
    expect(page.text).not.toContain(`/merges/${mergeId}/undo"`);
    const undo = `${base}/contacts/${first}/merges/${mergeId}/undo`;
    expect(pageText((await admin.get(undo)).text)).toContain("This merge can no longer be undone: its 30 days have ended.");
    const res = await admin.post(undo);
    expect(res.status).toBe(410);
  });
});
