/**
 * Applying a validated create or PATCH body to a contact (docs/api.md §11, §3): JSON Merge
 * Patch semantics (a field sent changes, `null` clears, a field left out stays; `address`
 * and `customFields` merge key by key; `tags` replaces the whole set), checks that need the
 * project's reference data (contact type, custom fields), identityType and "at least one
 * name, email, phone or business name". Against a real project in a temporary database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { applyContactInput, storedReference } from "../../src/contacts/apply.ts";
import type { ContactInput } from "../../src/contacts/schemas.ts";
import { blankState, type ContactState } from "../../src/contacts/state.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import type { Database } from "../../src/storage/schema.ts";
import { ApiError } from "../../src/errors.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { createCustomField } from "../../src/reference/repository.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-apply-"));
let db: Kysely<Database>;
let close: () => Promise<void>;
let projectId: string;
let otherProjectId: string;
let types: Record<string, string>;
let otherProjectType: string;
let fields: Record<"text" | "email" | "select" | "multiselect" | "number" | "image" | "offers", string>;

beforeAll(async () => {
  ({ db, close } = await openDatabase(join(dir, "a.db"), "NORMAL"));
  projectId = (await createProject(db, "apply", isoNow(systemClock))).id;
  otherProjectId = (await createProject(db, "other", isoNow(systemClock))).id;
  const rows = await db.selectFrom("contact_types").select(["id", "category", "project_id"]).execute();
  types = Object.fromEntries(rows.filter((r) => r.project_id === projectId).map((r) => [r.category, r.id]));
  otherProjectType = rows.find((r) => r.project_id === otherProjectId)!.id;
  fields = {
    text: (await createCustomField(db, projectId, "Nickname", "text", null, isoNow(systemClock))).id,
    email: (await createCustomField(db, projectId, "Work email", "email", null, isoNow(systemClock))).id,
    select: (await createCustomField(db, projectId, "Size", "select", ["S", "M", "L"], isoNow(systemClock))).id,
    multiselect: (await createCustomField(db, projectId, "Colours", "multiselect", ["red", "green"], isoNow(systemClock))).id,
    number: (await createCustomField(db, projectId, "Seats", "number", null, isoNow(systemClock))).id,
    image: (await createCustomField(db, projectId, "Photo", "image", null, isoNow(systemClock))).id,
    offers: (await createCustomField(db, projectId, "Offers", "offering-list", null, isoNow(systemClock))).id,
  };
  await createCustomField(db, otherProjectId, "Elsewhere", "text", null, isoNow(systemClock));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

const apply = (current: ContactState, input: Partial<ContactInput>) =>
  applyContactInput(storedReference(db, projectId, isoNow(systemClock)), current, input as ContactInput);

/** A contact with every field set, as a PATCH finds it. */
function full(): ContactState {
  return {
    ...blankState(7),
    identityType: "business",
    source: "import",
    firstName: "Ada",
    lastName: "Lovelace",
    email: "ada@example.com",
    phone: "+14155550100",
    businessName: "Engines Ltd",
    website: "https://example.com",
    address: { line1: "1 Main St", line2: "Floor 2", city: "London", state: "LDN", zip: "N1", country: "GB" },
    contactTypeId: types.Customer!,
    tagIds: ["tag_a", "tag_b"],
    subscribed: true,
    smsSubscribed: true,
    notes: "first met 2020",
    customFields: { [fields.text]: "Countess", [fields.number]: 3 },
  };
}

async function refused(run: Promise<unknown>): Promise<ApiError> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("expected a 422");
}

const PLAIN = ["source", "firstName", "lastName", "email", "phone", "businessName", "website", "notes"] as const;
const NEW_VALUES: Record<(typeof PLAIN)[number], string> = {
  source: "web_form",
  firstName: "Grace",
  lastName: "Hopper",
  email: "grace@example.com",
  phone: "+442079460018",
  businessName: "Navy",
  website: "https://navy.example",
  notes: "new notes",
};

describe("plain fields: sent changes, null clears, left out stays", () => {
  test("an empty body changes nothing", async () => {
    expect(await apply(full(), {})).toEqual(full());
  });

  for (const key of PLAIN) {
    test(`${key}: a value sent replaces it and touches nothing else`, async () => {
      expect(await apply(full(), { [key]: NEW_VALUES[key] })).toEqual({ ...full(), [key]: NEW_VALUES[key] });
    });

    test(`${key}: null clears it`, async () => {
      const next = await apply(full(), { [key]: null, ...(key === "businessName" ? { identityType: "business" } : {}) });
      expect(next).toEqual({ ...full(), [key]: null });
    });
  }

  test("several fields sent together each take their own value", async () => {
    const sent = { firstName: "Grace", lastName: "Hopper", email: "grace@example.com", phone: "+442079460018", notes: "n", website: "https://navy.example", source: "web_form" };
    expect(await apply(full(), sent)).toEqual({ ...full(), ...sent });
  });

  test("an email is stored trimmed (the value written, not only its match key)", async () => {
    expect((await apply(full(), { email: "  grace@example.com\t" })).email).toBe("grace@example.com");
  });

  test("other text is stored as sent, spaces included", async () => {
    expect((await apply(full(), { firstName: " Grace ", notes: "  indented" })).firstName).toBe(" Grace ");
  });

  test("subscribed and smsSubscribed: true/false set them, null means false, left out stays", async () => {
    expect(await apply(full(), { subscribed: false })).toMatchObject({ subscribed: false, smsSubscribed: true });
    expect(await apply(full(), { smsSubscribed: false })).toMatchObject({ subscribed: true, smsSubscribed: false });
    expect(await apply(full(), { subscribed: null, smsSubscribed: null })).toMatchObject({ subscribed: false, smsSubscribed: false });
    const blank = { ...blankState(1), firstName: "A" };
    expect(await apply(blank, { subscribed: true, smsSubscribed: true })).toMatchObject({ subscribed: true, smsSubscribed: true });
  });

  test("the current state is left as it was (PATCH compares before and after)", async () => {
    const current = full();
    await apply(current, { firstName: "Grace", address: { city: "Paris" }, customFields: { [fields.text]: "Amazing Grace" }, tags: ["x"] });
    expect(current).toEqual(full());
  });
});

describe("address merges key by key", () => {
  test("keys sent change, keys left out stay", async () => {
    expect((await apply(full(), { address: { city: "Paris", zip: "75001" } })).address).toEqual({
      ...full().address,
      city: "Paris",
      zip: "75001",
    });
  });

  test("a key sent as null clears that key only", async () => {
    expect((await apply(full(), { address: { line2: null } })).address).toEqual({ ...full().address, line2: null });
  });

  test("address: null clears every key, and the address keeps its six keys", async () => {
    expect((await apply(full(), { address: null })).address).toEqual({ line1: null, line2: null, city: null, state: null, zip: null, country: null });
  });

  test("a key present but undefined (a caller building the body, as an import does) changes nothing", async () => {
    expect((await apply(full(), { address: { city: undefined, zip: "75001" } })).address).toEqual({ ...full().address, zip: "75001" });
  });

  test("address: {} changes nothing", async () => {
    expect((await apply(full(), { address: {} })).address).toEqual(full().address);
  });
});

describe("contactTypeId", () => {
  test("a type of the project is set; null clears it", async () => {
    expect((await apply(full(), { contactTypeId: types.Lead! })).contactTypeId).toBe(types.Lead!);
    expect((await apply(full(), { contactTypeId: null })).contactTypeId).toBeNull();
  });

  test("an unknown id, or another project's, is 422 contactTypeId", async () => {
    for (const id of ["ct_nope", otherProjectType]) {
      const e = await refused(apply(full(), { contactTypeId: id }));
      expect([e.status, e.code, e.fieldName, e.message]).toEqual([422, "ERR_FORM_VALIDATION", "contactTypeId", "contactTypeId is not a contact type of this project."]);
    }
  });
});

describe("tags replace the whole set", () => {
  test("names create tags, match case-insensitively, and the set is stored sorted, once each", async () => {
    const first = await apply(full(), { tags: ["VIP", "newsletter"] });
    expect(first.tagIds).toHaveLength(2);
    expect(first.tagIds).toEqual([...first.tagIds].sort());
    const again = await apply(full(), { tags: ["newsletter", "vip", "Newsletter"] });
    expect(again.tagIds).toEqual(first.tagIds);
    const byId = await apply(full(), { tags: [first.tagIds[1]!, first.tagIds[0]!] });
    expect(byId.tagIds).toEqual(first.tagIds);
  });

  test("a new set replaces the old one; null and [] empty it; left out keeps it", async () => {
    expect((await apply(full(), { tags: ["only"] })).tagIds).toHaveLength(1);
    expect((await apply(full(), { tags: null })).tagIds).toHaveLength(0);
    expect((await apply(full(), { tags: [] })).tagIds).toHaveLength(0);
    expect((await apply(full(), { firstName: "x" })).tagIds).toEqual(["tag_a", "tag_b"]);
  });
});

describe("customFields merge key by key", () => {
  test("a value is checked and stored under the field's id, keyed by id or exact title", async () => {
    const next = await apply(full(), { customFields: { Size: "M", [fields.number]: 12 } });
    expect(next.customFields).toEqual({ [fields.text]: "Countess", [fields.number]: 12, [fields.select]: "M" });
  });

  test("the checked value is stored: an email trimmed, a multiselect once per option", async () => {
    const next = await apply(full(), { customFields: { [fields.email]: " ada@work.example ", Colours: ["red", "red", "green"] } });
    expect(next.customFields[fields.email]).toBe("ada@work.example");
    expect(next.customFields[fields.multiselect]).toEqual(["red", "green"]);
  });

  test("null for one key removes that value only", async () => {
    expect((await apply(full(), { customFields: { Nickname: null } })).customFields).toEqual({ [fields.number]: 3 });
  });

  test("customFields: null removes every value; {} changes nothing", async () => {
    expect((await apply(full(), { customFields: null })).customFields).toEqual({});
    expect((await apply(full(), { customFields: {} })).customFields).toEqual(full().customFields);
  });

  test("an unknown key, or another project's field, is 422 customFields.<key>", async () => {
    for (const key of ["cf_nope", "nickname", "Elsewhere"]) {
      const e = await refused(apply(full(), { customFields: { [key]: "x" } }));
      expect([e.status, e.fieldName, e.message]).toEqual([422, `customFields.${key}`, `customFields.${key} is not a custom field of this project (by id or title).`]);
    }
  });

  test("a wrong-typed value or one outside the options is 422 customFields.<id>, saying why", async () => {
    const wrong = await refused(apply(full(), { customFields: { Seats: "twelve" } }));
    expect([wrong.fieldName, wrong.message]).toEqual([`customFields.${fields.number}`, `customFields.${fields.number} (Seats) must be a number.`]);
    const outside = await refused(apply(full(), { customFields: { Size: "XL" } }));
    expect([outside.fieldName, outside.message]).toEqual([`customFields.${fields.select}`, `customFields.${fields.select} (Size) must be one of S, M, L.`]);
  });

  test("a read-only field (image, offering-list) can be neither written nor cleared: 422 customFields.<id>", async () => {
    for (const [title, id] of [["Photo", fields.image], ["Offers", fields.offers]] as const)
      for (const value of ["https://example.com/a.png", null]) {
        const e = await refused(apply(full(), { customFields: { [title]: value } }));
        expect([e.status, e.fieldName, e.message]).toEqual([422, `customFields.${id}`, `customFields.${id} (${title}) is read-only.`]);
      }
  });
});

describe("contactId relabel", () => {
  test("CR-<n> sets the contact number n; left out keeps it", async () => {
    expect((await apply(full(), { contactId: "CR-1001" })).contactNumber).toBe(1001);
    expect((await apply(full(), { contactId: "CR-999999999999" })).contactNumber).toBe(999_999_999_999);
    expect((await apply(full(), {})).contactNumber).toBe(7);
  });
});

describe("identityType", () => {
  const person = (): ContactState => ({ ...blankState(3), firstName: "Ada" });

  test("a new contact with a businessName and no identityType is business; without one it stays personal", async () => {
    expect((await apply(person(), { businessName: "Engines Ltd" })).identityType).toBe("business");
    expect((await apply(person(), { lastName: "Lovelace" })).identityType).toBe("personal");
  });

  test("an identityType sent is kept", async () => {
    expect((await apply(person(), { identityType: "business" })).identityType).toBe("business");
    expect((await apply({ ...person(), identityType: "business" }, { identityType: "personal" })).identityType).toBe("personal");
  });

  test("identityType: null goes back to the default: business with a businessName, else personal", async () => {
    expect((await apply(full(), { identityType: null })).identityType).toBe("business");
    expect((await apply({ ...full(), businessName: null }, { identityType: null })).identityType).toBe("personal");
    expect((await apply({ ...person(), identityType: "business" }, { identityType: null, businessName: "X" })).identityType).toBe("business");
  });

  test("personal with a businessName is 422 identityType, whether the name is sent or already there", async () => {
    for (const [current, input] of [
      [person(), { identityType: "personal", businessName: "Engines Ltd" }],
      [full(), { identityType: "personal" }],
    ] as const) {
      const e = await refused(apply(current, input));
      expect([e.status, e.fieldName, e.message]).toEqual([422, "identityType", "identityType cannot be personal for a contact with a businessName."]);
    }
  });

  test("a business contact that loses its businessName stays business (no silent change)", async () => {
    expect((await apply(full(), { businessName: null })).identityType).toBe("business");
  });
});

describe("at least one of firstName, lastName, email, phone, businessName", () => {
  const MESSAGE = "At least one of firstName, lastName, email, phone or businessName is required.";

  test("a body that leaves none of them is 422 firstName", async () => {
    const e = await refused(apply(blankState(1), { notes: "nobody", website: "https://example.com" }));
    expect([e.status, e.code, e.fieldName, e.message]).toEqual([422, "ERR_FORM_VALIDATION", "firstName", MESSAGE]);
  });

  test("clearing the last one of a contact is 422 too", async () => {
    const current: ContactState = { ...blankState(2), phone: "+14155550100" };
    expect((await refused(apply(current, { phone: null }))).fieldName).toBe("firstName");
  });

  test("blank text does not count", async () => {
    for (const key of ["firstName", "lastName", "email", "phone", "businessName"] as const) {
      const input = { [key]: "   ", ...(key === "businessName" ? { identityType: "business" as const } : {}) };
      expect((await refused(apply(blankState(1), input))).fieldName).toBe("firstName");
    }
  });

  for (const key of ["firstName", "lastName", "email", "phone", "businessName"] as const)
    test(`${key} alone is enough`, async () => {
      const next = await apply(blankState(1), { [key]: NEW_VALUES[key] });
      expect(next[key]).toBe(NEW_VALUES[key]);
    });
});
