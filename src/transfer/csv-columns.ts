import { ADDRESS_KEYS } from "../contacts/schemas.ts";
import { unneutraliseFormula } from "./spreadsheet.ts";

/**
 * The CSV vocabulary of contacts (docs/import-export.md §1), shared by the importer
 * (src/transfer/import-columns.ts) and the exporter (src/transfer/export.ts), so what
 * `crm export` writes `crm import` reads back.
 */

/**
 * A header as matched: lower case, without spaces, `_`, `-` and `.` ("E-mail 1 - Value" →
 * "email1value"), and without the `'` an export puts before a custom field title such as
 * `=x` (docs/security.md §1, src/transfer/spreadsheet.ts).
 */
export const normalizeHeader = (header: string) => unneutraliseFormula(header).toLowerCase().replace(/[\s_\-.]+/g, "");

/** Contact fields a CSV column can set, as the create body names them (docs/api.md §11). */
export const TEXT_FIELDS = [
  "firstName", "lastName", "email", "phone", "businessName", "website", "notes",
  "source", "identityType", "contactTypeId",
] as const;
export const BOOLEAN_FIELDS = ["subscribed", "smsSubscribed"] as const;
export const ADDRESS_FIELDS = ADDRESS_KEYS.map((key) => `address.${key}` as const);

/**
 * Columns an export writes that are not written by an import: the service sets them
 * (contactId, createdAt, updatedAt). An import recognises and skips them, and says so.
 */
export const READ_ONLY_FIELDS = ["contactId", "createdAt", "updatedAt"] as const;

/** The contact type by its name (an export writes the name: type ids differ between projects). */
export const CONTACT_TYPE_FIELD = "contactType";

/**
 * Other CRMs' headers for our fields (docs/import-export.md §1.2), before normalizing: HubSpot's
 * contact export, Pipedrive's people export (with and without the `Person - ` prefix) and
 * Google Contacts' CSV (its current and older forms).
 */
export const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  firstName: ["first name", "given name", "person - first name"],
  lastName: ["last name", "surname", "family name", "person - last name"],
  email: ["e-mail", "email address", "e-mail 1 - value", "person - email", "person - email - work", "email - work", "work email"],
  phone: ["phone number", "phone 1 - value", "person - phone", "person - phone - work", "phone - work", "work phone", "telephone"],
  businessName: [
    "company", "company name", "organization", "organisation", "organization 1 - name", "organization name",
    "organization - name", "person - organization",
  ],
  website: ["url", "web site", "website url", "website 1 - value"],
  notes: ["note", "person - note"],
  tags: ["labels", "label", "person - label", "person - labels", "group membership"],
  "address.line1": ["street", "address", "address line 1", "street address", "address 1 - street"],
  "address.line2": ["address line 2", "address 1 - extended address"],
  "address.city": ["city", "town", "address 1 - city"],
  "address.state": ["state", "region", "province", "state/region", "address 1 - region"],
  "address.zip": ["zip", "zip code", "postal code", "postcode", "address 1 - postal code"],
  "address.country": ["country", "country/region", "address 1 - country"],
};

/**
 * Second-choice headers (docs/import-export.md §1.2): each gives way to another column filling
 * the same field, and is read in a row only where that column's cell is empty (HubSpot's
 * "Mobile Phone Number" beside "Phone Number"). Of two of them alone, the one listed first fills.
 */
export const FALLBACK_ALIASES: Readonly<Record<string, readonly string[]>> = {
  email: ["person - email - home", "email - home", "person - email - other", "email - other", "e-mail 2 - value"],
  phone: [
    "mobile phone number", "mobile phone", "mobile", "person - phone - mobile", "phone - mobile",
    "person - phone - home", "phone - home", "person - phone - other", "phone - other", "phone 2 - value",
  ],
};

/**
 * Lifecycle-like headers (docs/import-export.md §1.2): offered as the contact type, whose cells
 * name one of the project's contact types. One column gives it: a `contactType` or
 * `contactTypeId` column, else the first of these in this order; the others are skipped.
 */
export const CONTACT_TYPE_ALIASES = ["contact type", "lifecycle stage", "lifecycle", "type", "stage", "lead status"] as const;

/**
 * Whole-name headers (Pipedrive's "Person - Name"): split into firstName and lastName at the
 * first space, unless the file has a column for either; one of them is read, the first listed.
 */
export const FULL_NAME_ALIASES = ["full name", "name", "person - name", "contact name"] as const;

/** The column the rejected rows' CSV adds with each row's reason (docs/import-export.md §1.11): always skipped. */
export const ERROR_COLUMN = "error";

/**
 * The export's columns before the custom fields (docs/import-export.md §2: contactId, every contact
 * field, address.*, tags), in the order written.
 */
export const EXPORT_COLUMNS = [
  "contactId", "identityType", "source", "firstName", "lastName", "email", "phone", "businessName", "website",
  CONTACT_TYPE_FIELD, "subscribed", "smsSubscribed", "notes", "createdAt", "updatedAt",
  ...ADDRESS_FIELDS, "tags",
] as const;

/** Tag names and multiselect values in one cell: joined by `; ` (docs/import-export.md §1), split on `;` or `|` on import. */
export const LIST_SEPARATOR = "; ";

/** Every normalized header that names a contact field (field names and their aliases). */
const FIELD_HEADERS = new Set(
  [
    ...TEXT_FIELDS, ...BOOLEAN_FIELDS, ...ADDRESS_FIELDS, ...READ_ONLY_FIELDS, CONTACT_TYPE_FIELD, "tags", ERROR_COLUMN,
    ...Object.values(FIELD_ALIASES).flat(), ...Object.values(FALLBACK_ALIASES).flat(), ...CONTACT_TYPE_ALIASES, ...FULL_NAME_ALIASES,
  ].map(normalizeHeader),
);

/**
 * The export's header for a custom field: its title, unless the title reads as a contact
 * field or an alias ("City", "Notes"); then `customFields.<title>`, which the import
 * always takes as the custom field.
 */
export const customFieldHeader = (title: string) =>
  FIELD_HEADERS.has(normalizeHeader(title)) || /^customfields\./i.test(title) ? `customFields.${title}` : title;
