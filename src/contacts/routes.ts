import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { limitCreates } from "../auth/limits.ts";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, created, errors, json, jsonRequest, mergePatchRequest, reading, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { listContacts } from "./list.ts";
import { currentFeedCursor } from "../changes/service.ts";
import {
  ContactIdParam,
  ContactList,
  ContactWithSignal,
  ContactWriteAnswer,
  CreateContactBody,
  ListContactsQuery,
  PatchContactBody,
  UpsertContactQuery,
} from "./schemas.ts";
import { etagOf, ifMatchOf } from "./preconditions.ts";
import { contactForCaller } from "./receipts.ts";
import { createContact, getContactWithSignal, patchContact, requireContactNumber } from "./service.ts";
import { takeCreateTokenIfNew, upsertContact } from "./upsert.ts";

/**
 * Contacts (docs/api.md §11). Handlers stay thin: validate, call the service, answer; a
 * write answers through contactForCaller (docs/security.md §3).
 */
export const contactRoutes = new OpenAPIHono<AppEnv>();

const tags = ["Contacts"];

/** Said on every contact write's success answer: when the receipt comes instead of the contact. */
const RECEIPT_NOTE = "To a key without contacts:read, only the contact's receipt (ContactReceipt: contactId, version, createdAt, updatedAt).";

/** The ETag header of an answer that carries one contact (docs/api.md §18.1). */
const ETAG = { ETag: { description: 'The contact\'s version as an entity tag: "<version>".', schema: { type: "string" as const, example: '"3"' } } };
const UPSERT_RESULT = {
  "Upsert-Result": { description: "What the upsert did.", schema: { type: "string" as const, enum: ["created", "updated", "unchanged"] } },
};
const CHANGES_CURSOR = {
  "Changes-Cursor": {
    description: "The change feed's position read before this page: follow GET /changes from it once every page is read (docs/api.md §19.2).",
    schema: { type: "string" as const },
  },
};
const IF_MATCH_NOTE = 'If-Match: "<version>" (or *) makes the write conditional: 412 ERR_PRECONDITION_FAILED when the contact has changed since (docs/api.md §18.1).';

contactRoutes.openapi(
  createRoute({
    method: "post",
    path: "/contacts",
    operationId: "createContact",
    summary: "Create a contact",
    description: "Always creates; never upserts. Accepts an Idempotency-Key header.",
    tags,
    security,
    middleware: [limitCreates(), ...writing("contacts:write")],
    request: { body: jsonRequest(CreateContactBody) },
    responses: {
      201: { ...created(ContactWriteAnswer, `The created contact. ${RECEIPT_NOTE}`), headers: { Location: { $ref: "#/components/headers/Location" }, ...ETAG } },
      ...commonErrors,
      402: errors[402],
      413: errors[413],
      415: errors[415],
    },
  }),
  async (c) => {
    const contact = await createContact(c.get("db"), c.get("caller").projectId, c.req.valid("json"), { now: isoNow(c.get("deps").clock) });
    c.header("Location", `/v1/contacts/${contact.contactId}`);
    c.header("ETag", etagOf(contact.version));
    return c.json(contactForCaller(c.get("caller"), contact), 201);
  },
);

contactRoutes.openapi(
  createRoute({
    method: "get",
    path: "/contacts",
    operationId: "listContacts",
    summary: "List contacts",
    description:
      "Most recently updated first. Filters combine with AND: email and phone match exactly (the phone normalised), contactTypeId, " +
      "contactTypeCategory, tag (repeatable; every tag must match), updatedSince, and search (every word matches, in any order, a prefix " +
      "of a word of the names or businessName, of the email, its parts or domain labels, or of the contactId; phone digits in any format; " +
      "case and accents never matter; one typo forgiven in words of 5+ letters). The cursor is bound to the filters it was made with.",
    tags,
    security,
    middleware: reading("contacts:read"),
    request: { query: ListContactsQuery },
    responses: {
      200: { ...json(ContactList, "One page, most recently updated first."), headers: CHANGES_CURSOR },
      ...commonErrors,
    },
  }),
  async (c) => {
    const { db, deps, caller } = c.var;
    // Read before the page (docs/api.md §19.2): a mirror that follows the feed from here misses nothing the page lacks.
    c.header("Changes-Cursor", await currentFeedCursor(db, deps.cursors, caller.projectId));
    return c.json(await listContacts(db, deps.cursors, caller.projectId, c.req.valid("query")), 200);
  },
);

contactRoutes.openapi(
  createRoute({
    method: "get",
    path: "/contacts/{contactId}",
    operationId: "getContact",
    summary: "Get a contact with its duplicateSignal",
    description: "The contact, and duplicateSignal: how many other contacts of the project share its email and its phone.",
    tags,
    security,
    middleware: reading("contacts:read"),
    request: { params: ContactIdParam },
    responses: { 200: { ...json(ContactWithSignal, "The contact."), headers: ETAG }, ...commonErrors, 404: errors[404] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const contact = await getContactWithSignal(c.get("db"), c.get("caller").projectId, n);
    c.header("ETag", etagOf(contact.version));
    return c.json(contact, 200);
  },
);

contactRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/contacts/{contactId}",
    operationId: "updateContact",
    summary: "Merge-patch a contact",
    description: `Fields sent change; null clears; address and customFields merge; tags replace. A contactId relabels. ${IF_MATCH_NOTE}`,
    tags,
    security,
    middleware: writing("contacts:write"),
    request: { params: ContactIdParam, body: mergePatchRequest(PatchContactBody) },
    responses: {
      200: { ...json(ContactWriteAnswer, `The contact after the change. ${RECEIPT_NOTE}`), headers: ETAG },
      ...commonErrors,
      404: errors[404],
      409: errors[409],
      412: errors[412],
    },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const now = isoNow(c.get("deps").clock);
    const { contact } = await patchContact(c.get("db"), c.get("caller").projectId, n, c.req.valid("json"), now, ifMatchOf(c));
    c.header("ETag", etagOf(contact.version));
    return c.json(contactForCaller(c.get("caller"), contact), 200);
  },
);

contactRoutes.openapi(
  createRoute({
    method: "put",
    path: "/contacts",
    operationId: "upsertContact",
    summary: "Create or update the contact that holds a value (upsert)",
    description:
      "Finds the contact by the body's matchOn value (email and phone normalised, a unique custom field's trimmed text). None: created " +
      "as by POST (201). One: updated as by PATCH (200), with update=merge|fill and tags=replace|add. Several: 409 ERR_AMBIGUOUS_MATCH " +
      `listing them in matches. Upsert-Result says which. Race-safe across nodes. Accepts an Idempotency-Key. ${IF_MATCH_NOTE}`,
    tags,
    security,
    middleware: writing("contacts:write", { prepare: takeCreateTokenIfNew }),
    request: { query: UpsertContactQuery, body: mergePatchRequest(CreateContactBody) },
    responses: {
      200: { ...json(ContactWriteAnswer, `The contact, updated or unchanged. ${RECEIPT_NOTE}`), headers: { ...ETAG, ...UPSERT_RESULT } },
      201: {
        ...created(ContactWriteAnswer, `The created contact. ${RECEIPT_NOTE}`),
        headers: { Location: { $ref: "#/components/headers/Location" }, ...ETAG, ...UPSERT_RESULT },
      },
      ...commonErrors,
      402: errors[402],
      409: errors[409],
      412: errors[412],
      413: errors[413],
      415: errors[415],
    },
  }),
  async (c) => {
    const { contact, result } = await upsertContact(c.get("db"), c.get("caller").projectId, c.req.valid("json"), {
      ...c.req.valid("query"),
      now: isoNow(c.get("deps").clock),
      ifMatch: ifMatchOf(c),
    });
    c.header("Upsert-Result", result);
    c.header("ETag", etagOf(contact.version));
    if (result === "created") c.header("Location", `/v1/contacts/${contact.contactId}`);
    return c.json(contactForCaller(c.get("caller"), contact), result === "created" ? 201 : 200);
  },
);
