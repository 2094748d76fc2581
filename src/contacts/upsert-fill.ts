import { notFound } from "../errors.ts";
import { jsonColumn } from "../storage/query.ts";
import type { Db } from "../storage/schema.ts";
import { allCustomFields } from "../reference/repository.ts";
import * as repo from "./repository.ts";
import type { ContactInput, UpsertOptions } from "./schemas.ts";
import { stateFromRow, type ContactState } from "./state.ts";

const empty = (v: unknown) => v === null || v === undefined || (typeof v === "string" && v.trim() === "");

const FILLABLE = ["source", "firstName", "lastName", "email", "phone", "businessName", "website", "notes", "contactTypeId"] as const;

/**
 * The part of an upsert's body that `update=fill` and `tags=add` let through to the stored
 * contact (docs/api.md §18.2): with fill, only fields empty on the stored contact (null or
 * blank text; address and customFields key by key; identityType and the booleans are never
 * empty, so fill never changes a consent); tags follow `tags`: `add` joins the stored ones, `replace` replaces
 * them, under fill only when the contact has none.
 */
export async function fillOnly(db: Db, projectId: string, contactNumber: number, input: ContactInput, options: UpsertOptions): Promise<ContactInput> {
  const row = await repo.findContactRow(db, projectId, contactNumber);
  if (!row) throw notFound("Contact");
  const tags = jsonColumn(row.tags);
  const stored = stateFromRow(row, tags.map((t) => t.id));
  const patch: ContactInput = options.update === "fill" ? await fillPatch(db, projectId, stored, input) : { ...input };

  if (input.tags !== undefined) {
    if (options.tags === "add") patch.tags = [...tags.map((t) => t.id), ...(input.tags ?? [])];
    else if (options.update === "fill" && tags.length > 0) delete patch.tags;
    else patch.tags = input.tags;
  }
  return patch;
}

async function fillPatch(db: Db, projectId: string, stored: ContactState, input: ContactInput): Promise<ContactInput> {
  const patch: ContactInput = {};
  for (const key of FILLABLE) {
    if (input[key] !== undefined && empty(stored[key])) (patch as Record<string, unknown>)[key] = input[key];
  }
  if (input.address) {
    const address = Object.fromEntries(Object.entries(input.address).filter(([k]) => empty(stored.address[k as keyof typeof stored.address])));
    if (Object.keys(address).length > 0) patch.address = address;
  }
  if (input.customFields) {
    const fields = await allCustomFields(db, projectId);
    const idOf = (ref: string) => fields.find((f) => f.id === ref || f.title === ref)?.id ?? ref;
    const values = Object.fromEntries(Object.entries(input.customFields).filter(([ref]) => empty(stored.customFields[idOf(ref)])));
    if (Object.keys(values).length > 0) patch.customFields = values;
  }
  return patch;
}
