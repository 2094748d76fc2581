import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import { limitCreates } from "../auth/limits.ts";
import type { AppEnv } from "../http/env.ts";
import { commonErrors, created, errors, json, jsonRequest, reading, security, writing } from "../http/openapi.ts";
import { isoNow } from "../lib/time.ts";
import { listContacts } from "./list.ts";
import {
  ContactIdParam,
  ContactList,
  ContactWithSignal,
  ContactWriteAnswer,
  CreateContactBody,
  ListContactsQuery,
  PatchContactBody,
} from "./schemas.ts";
import { contactForCaller } from "./receipts.ts";
import { createContact, getContactWithSignal, patchContact, requireContactNumber } from "./service.ts";

/**
 * Contacts (docs/api.md §11). Handlers stay thin: validate, call the service, answer; a
 * write answers through contactForCaller (docs/security.md §3).
 */
export const contactRoutes = new OpenAPIHono<AppEnv>();

const tags = ["Contacts"];

/** Said on every contact write's success answer: when the receipt comes instead of the contact. */
const RECEIPT_NOTE = "To a key without contacts:read, only the contact's receipt (ContactReceipt: contactId, createdAt, updatedAt).";

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
      201: created(ContactWriteAnswer, `The created contact. ${RECEIPT_NOTE}`),
      ...commonErrors,
      402: errors[402],
      413: errors[413],
      415: errors[415],
    },
  }),
  async (c) => {
    const contact = await createContact(c.get("db"), c.get("caller").projectId, c.req.valid("json"), { now: isoNow(c.get("deps").clock) });
    c.header("Location", `/v1/contacts/${contact.contactId}`);
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
      "contactTypeCategory, tag (repeatable; every tag must match), updatedSince, and search (a prefix of any word of the names, the " +
      "email or the contactId, case-insensitive). The cursor is bound to the filters it was made with.",
    tags,
    security,
    middleware: reading("contacts:read"),
    request: { query: ListContactsQuery },
    responses: { 200: json(ContactList, "One page, most recently updated first."), ...commonErrors },
  }),
  async (c) => c.json(await listContacts(c.get("db"), c.get("deps").cursors, c.get("caller").projectId, c.req.valid("query")), 200),
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
    responses: { 200: json(ContactWithSignal, "The contact."), ...commonErrors, 404: errors[404] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    return c.json(await getContactWithSignal(c.get("db"), c.get("caller").projectId, n), 200);
  },
);

contactRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/contacts/{contactId}",
    operationId: "updateContact",
    summary: "Merge-patch a contact",
    description: "Fields sent change; null clears; address and customFields merge; tags replace. A contactId relabels.",
    tags,
    security,
    middleware: writing("contacts:write"),
    request: { params: ContactIdParam, body: jsonRequest(PatchContactBody) },
    responses: { 200: json(ContactWriteAnswer, `The contact after the change. ${RECEIPT_NOTE}`), ...commonErrors, 404: errors[404], 409: errors[409] },
  }),
  async (c) => {
    const n = requireContactNumber(c.req.valid("param").contactId);
    const { contact } = await patchContact(c.get("db"), c.get("caller").projectId, n, c.req.valid("json"), isoNow(c.get("deps").clock));
    return c.json(contactForCaller(c.get("caller"), contact), 200);
  },
);
