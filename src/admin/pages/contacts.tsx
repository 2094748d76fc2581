import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { contactBulkPages } from "./contacts-bulk.tsx";
import { contactFormPages } from "./contact-form.tsx";
import { contactMergeWithPages } from "./contact-merge-with.tsx";
import { contactPagePages } from "./contact-page.tsx";
import { renderList } from "./contacts-list-page.tsx";

/** Contacts of a project (docs/admin.md §3): the list with search, filters, sort, pages and bulk actions; a contact's page; create and edit. */
export const contactPages = new Hono<AdminEnv>();

contactPages.get("/", (c) => renderList(c, new URL(c.req.url).searchParams));

// "/bulk" and "/new" before "/:contactId": the first route that matches answers.
contactPages.route("/", contactBulkPages);
contactPages.route("/", contactFormPages);
contactPages.route("/", contactMergeWithPages);
contactPages.route("/", contactPagePages);
