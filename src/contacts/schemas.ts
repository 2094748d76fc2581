import { z } from "@hono/zod-openapi";
import { erasedShape } from "../lib/erased.ts";
import { HTTP_URL_PATTERN, isEmail, isHttpUrl } from "../lib/formats.ts";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { isoTimeSchema, timestampSchema } from "../lib/time.ts";
import { contactExample, createContactExample } from "./examples.ts";
import { CATEGORIES, TagSchema } from "../reference/schemas.ts";

const text = (max: number) => z.string().max(max, `must be at most ${max} characters.`);
const name = text(255).nullable().optional();

/**
 * An email input is trimmed before it is checked and stored (docs/api.md §11.7), so the
 * document cannot state `format: email` of the input itself (the address with its spaces
 * is not one): it says so in words; the answer's email is `format: email`.
 */
const email = text(254)
  .refine((v) => isEmail(v.trim()), "must be a valid email address.")
  .nullable()
  .optional()
  .openapi({ description: "An email address; surrounding whitespace is trimmed before it is checked and stored.", example: "ada@example.com" });

const website = text(2048)
  .refine(isHttpUrl, "must be an http(s) URL.")
  .nullable()
  .optional()
  .openapi({ format: "uri", pattern: HTTP_URL_PATTERN, example: "https://example.com" });

export const ADDRESS_KEYS = ["line1", "line2", "city", "state", "zip", "country"] as const;

const AddressInput = z.strictObject(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, name])) as Record<(typeof ADDRESS_KEYS)[number], typeof name>);

const tagRef = z.string().min(1, "must be 1–64 characters.").max(64, "must be 1–64 characters.");

/** Fields writable on create (docs/api.md §11); PATCH takes the same plus contactId. */
const writable = {
  firstName: name,
  lastName: name,
  email,
  phone: text(32).nullable().optional().openapi({ example: "+1 415 555 0100" }),
  businessName: name,
  website,
  address: AddressInput.nullable().optional(),
  contactTypeId: z.string().nullable().optional(),
  tags: z.array(tagRef).max(100, "must have at most 100 items.").nullable().optional().openapi({
    description: "Tag names or ids; unknown names are created.",
  }),
  customFields: z.record(z.string(), z.unknown()).nullable().optional().openapi({
    description: "Custom-field id or exact title → value.",
  }),
  notes: text(65_535).nullable().optional(),
  subscribed: z.boolean().nullable().optional(),
  smsSubscribed: z.boolean().nullable().optional(),
  source: text(255).nullable().optional(),
  identityType: z.enum(["personal", "business"]).nullable().optional(),
};

/**
 * The largest number a relabel may take (docs/api.md §11.4). Generated numbers go on past it by
 * one per contact, so they stay far below what the path accepts (`CR-` + up to 15 digits,
 * src/contacts/service.ts) and below 2^53, where JavaScript numbers stop being exact.
 */
export const MAX_RELABEL_NUMBER = 999_999_999_999;

const relabel = z
  .string()
  .regex(/^CR-\d+$/, "must be CR- followed by digits, such as CR-1001.")
  .refine((v) => Number(v.slice(3)) <= MAX_RELABEL_NUMBER, "must be CR-<n> with n at most 999999999999.")
  .openapi({ example: "CR-1001", description: "Relabels the contact: CR-<n>, n at most 999,999,999,999, unused in the project." });

export const CreateContactBody = z.strictObject(writable).openapi("CreateContact", { example: createContactExample });
export const PatchContactBody = z
  .strictObject({ ...writable, contactId: relabel.optional() })
  .openapi("PatchContact", { example: { email: "ada.lovelace@example.com", tags: ["vip", "newsletter"], address: { city: "Cambridge" } } });

export type ContactInput = z.infer<typeof PatchContactBody>;

export const AddressSchema = z.object(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, z.string().nullable()])) as Record<
  (typeof ADDRESS_KEYS)[number],
  z.ZodNullable<z.ZodString>
>);

export const ContactSchema = z
  .object({
    contactId: z.string().openapi({ example: "CR-1" }),
    version: z.number().int().min(1).openapi({ description: "1 at creation, +1 on every change; the ETag is its quoted value (docs/api.md §18.1).", example: 1 }),
    identityType: z.enum(["personal", "business"]),
    source: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    email: z.email().nullable(),
    phone: z.string().nullable(),
    businessName: z.string().nullable(),
    website: z.url().nullable(),
    address: AddressSchema,
    contactType: z.object({ id: z.string(), name: z.string(), category: z.enum(CATEGORIES) }).nullable(),
    tags: z.array(TagSchema),
    subscribed: z.boolean(),
    smsSubscribed: z.boolean(),
    notes: z.string().nullable(),
    customFields: z.record(z.string(), z.unknown()),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi("Contact", { example: contactExample });

export type Contact = z.infer<typeof ContactSchema>;

/**
 * What a write answers a key without `contacts:read` (docs/security.md §3):
 * the contact's id and times, nothing the key could not read. Strict, so a whole contact
 * never matches it and the answer's `oneOf` has exactly one match.
 */
export const ContactReceiptSchema = z
  .strictObject({
    contactId: z.string().openapi({ example: "CR-1" }),
    version: z.number().int().min(1),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi("ContactReceipt", {
    description: "A contact write's answer to a key without contacts:read: the contact's id, version and times only.",
    example: { contactId: contactExample.contactId, version: contactExample.version, createdAt: contactExample.createdAt, updatedAt: contactExample.updatedAt },
  });

export type ContactReceipt = z.infer<typeof ContactReceiptSchema>;

/** A contact erased since the event or the stored answer (docs/import-export.md §3): its fields are null. */
export const ErasedContact = z
  .object(erasedShape(ContactSchema.shape, ["contactId"]))
  .openapi("ErasedContact", { description: "The contact was erased (crm contact erase): every field but contactId is null." });

/** A receipt (docs/security.md §3) replayed after its contact was erased: its fields but contactId are null. */
export const ErasedContactReceipt = z
  .strictObject(erasedShape(ContactReceiptSchema.shape, ["contactId"]))
  .openapi("ErasedContactReceipt", { description: "A receipt whose contact was erased since: every field but contactId is null." });

/**
 * The answer of a contact write: the contact, or its receipt (docs/security.md §3); an
 * Idempotency-Key replay of a write whose contact was erased since, its erased shape.
 */
export const ContactWriteAnswer = z
  .union([ContactSchema, ContactReceiptSchema, ErasedContact, ErasedContactReceipt])
  .openapi({}, { unionPreferredType: "oneOf" });

export const ContactWithSignal = ContactSchema.extend({
  duplicateSignal: z.object({ emailMatches: z.number().int(), phoneMatches: z.number().int() }),
}).openapi("ContactWithDuplicateSignal", { example: { ...contactExample, duplicateSignal: { emailMatches: 0, phoneMatches: 1 } } });

/** Each `tag` filter adds a join to the list query; past a few the query only gets slower (docs/api.md §7). */
export const MAX_TAG_FILTERS = 20;


export const ListContactsQuery = z.object({
  email: z.string().optional(),
  phone: z.string().optional(),
  contactTypeId: z.string().optional(),
  contactTypeCategory: z.enum(CATEGORIES).optional(),
  tag: z
    .union([z.string(), z.array(z.string()).max(MAX_TAG_FILTERS, `must be given at most ${MAX_TAG_FILTERS} times.`)])
    .optional()
    .openapi({ description: `Repeatable, at most ${MAX_TAG_FILTERS} times; every tag must match.` }),
  updatedSince: isoTimeSchema.optional(),
  search: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .openapi({
      description:
        "Free text, at most 8 words, every one matched in any order: a prefix of a word of the names or businessName, of the email (whole, " +
        "local part, domain, its labels) or of the contactId; 4+ digits in any phone format match the phone by its E.164 or national " +
        "prefix or its last digits; case and accents ignored; one typo forgiven in a word of 5+ letters with no exact or prefix match.",
    }),
  sort: z
    .enum(["updatedAt", "relevance"])
    .optional()
    .openapi({ description: "updatedAt (default): most recently updated first. relevance (only with search): exact word matches, then prefix, then one-typo matches, each newest update first." }),
  limit: limitParam,
  cursor: cursorParam,
});

export type ListContactsFilters = z.infer<typeof ListContactsQuery>;

export const ContactList = listEnvelope(ContactSchema, "ContactList");

/** PUT /contacts's query (docs/api.md §18.2); a batch upsert takes the same three in its body. */
export const matchOnSchema = z
  .string()
  .regex(/^(email|phone|customFields\..+)$/, "must be email, phone or customFields.<id or title> of a unique custom field.")
  .openapi({ description: "email, phone, or customFields.<id or title> of a unique custom field.", example: "email" });
export const updateModeSchema = z
  .enum(["merge", "fill"])
  .openapi({ description: "merge: as PATCH (default); fill: write only fields empty on the stored contact." });
export const tagsModeSchema = z
  .enum(["replace", "add"])
  .openapi({ description: "replace: the body's tags replace the contact's (default); add: they join them." });

export const UpsertContactQuery = z.object({ matchOn: matchOnSchema, update: updateModeSchema.default("merge"), tags: tagsModeSchema.default("replace") });
export type UpsertOptions = z.infer<typeof UpsertContactQuery>;

export const ContactIdParam = z.object({
  contactId: z.string().openapi({ param: { name: "contactId", in: "path" }, example: "CR-1" }),
});
