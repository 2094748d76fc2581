import { z } from "@hono/zod-openapi";
import { isEmail, isHttpUrl } from "../lib/formats.ts";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";
import { toIso } from "../lib/time.ts";
import { CATEGORIES, TagSchema } from "../reference/schemas.ts";

const text = (max: number) => z.string().max(max, `at most ${max} characters.`);
const name = text(255).nullable().optional();

const email = text(254)
  .refine((v) => isEmail(v.trim()), "must be a valid email address.")
  .nullable()
  .optional()
  .openapi({ example: "ada@example.com" });

const website = text(2048).refine(isHttpUrl, "must be an http(s) URL.").nullable().optional();

export const ADDRESS_KEYS = ["line1", "line2", "city", "state", "zip", "country"] as const;

const AddressInput = z.strictObject(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, name])) as Record<(typeof ADDRESS_KEYS)[number], typeof name>);

const tagRef = z.string().min(1, "tag names are 1–64 characters.").max(64, "tag names are 1–64 characters.");

/** Fields writable on create (decisions §5); PATCH takes the same plus contactId. */
const writable = {
  firstName: name,
  lastName: name,
  email,
  phone: text(32).nullable().optional().openapi({ example: "+1 415 555 0100" }),
  businessName: name,
  website,
  address: AddressInput.nullable().optional(),
  contactTypeId: z.string().nullable().optional(),
  tags: z.array(tagRef).max(100, "at most 100 tags per contact.").nullable().optional().openapi({
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

export const CreateContactBody = z.strictObject(writable).openapi("CreateContact");
export const PatchContactBody = z
  .strictObject({
    ...writable,
    contactId: z.string().regex(/^CR-\d{1,15}$/, "must be CR-<digits>.").optional().openapi({ example: "CR-1001" }),
  })
  .openapi("PatchContact");

export type ContactInput = z.infer<typeof PatchContactBody>;

export const AddressSchema = z.object(Object.fromEntries(ADDRESS_KEYS.map((k) => [k, z.string().nullable()])) as Record<
  (typeof ADDRESS_KEYS)[number],
  z.ZodNullable<z.ZodString>
>);

export const ContactSchema = z
  .object({
    contactId: z.string().openapi({ example: "CR-1" }),
    identityType: z.enum(["personal", "business"]),
    source: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    email: z.string().nullable(),
    phone: z.string().nullable(),
    businessName: z.string().nullable(),
    website: z.string().nullable(),
    address: AddressSchema,
    contactType: z.object({ id: z.string(), name: z.string(), category: z.enum(CATEGORIES) }).nullable(),
    tags: z.array(TagSchema),
    subscribed: z.boolean(),
    smsSubscribed: z.boolean(),
    notes: z.string().nullable(),
    customFields: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Contact");

export type Contact = z.infer<typeof ContactSchema>;

export const ContactWithSignal = ContactSchema.extend({
  duplicateSignal: z.object({ emailMatches: z.number().int(), phoneMatches: z.number().int() }),
}).openapi("ContactWithDuplicateSignal");

const isoTime = z.string().refine((v) => toIso(v) !== null, "must be an ISO 8601 timestamp.");

export const ListContactsQuery = z.object({
  email: z.string().optional(),
  phone: z.string().optional(),
  contactTypeId: z.string().optional(),
  contactTypeCategory: z.enum(CATEGORIES).optional(),
  tag: z.union([z.string(), z.array(z.string())]).optional().openapi({ description: "Repeatable; every tag must match." }),
  updatedSince: isoTime.optional(),
  search: z.string().min(1).max(255).optional(),
  limit: limitParam,
  cursor: cursorParam,
});

export type ListContactsFilters = z.infer<typeof ListContactsQuery>;

export const ContactList = listEnvelope(ContactSchema, "ContactList");

export const ContactIdParam = z.object({
  contactId: z.string().openapi({ param: { name: "contactId", in: "path" }, example: "CR-1" }),
});
