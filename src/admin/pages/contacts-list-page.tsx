import type { Context } from "hono";
import { listConsoleContacts, type ConsoleListPage } from "../../contacts/console-list.ts";
import { listNamed } from "../../reference/repository.ts";
import { formErrors } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import type { FormErrors } from "../ui.tsx";
import { loadReference } from "./contact-common.ts";
import { listInput, readQuery } from "./contacts-list-query.ts";
import { ContactsPage } from "./contacts-list-view.tsx";

/** Most tag names the bulk tag field offers (a project has a few dozen; more can still be typed). */
const MAX_TAG_NAMES = 500;

/**
 * The list at the address `params` gives (filters, sort, cursor), with `errors` and the
 * ticked boxes of a refused bulk action; a refused filter is shown at its field, 422.
 */
export async function renderList(
  c: Context<AdminEnv>,
  params: URLSearchParams,
  refusal?: { errors: FormErrors; selected: string[]; bulkTag: string },
) {
  const { db, cursors } = c.var.deps;
  const projectId = c.var.project.id;
  const [reference, tags] = await Promise.all([loadReference(db, projectId), listNamed(db, "tags", projectId, MAX_TAG_NAMES)]);
  const { query, cursor } = readQuery(params);
  const props = { c, reference, tagNames: tags.slice(0, MAX_TAG_NAMES).map((t) => t.name), query, cursor };
  let page: ConsoleListPage;
  try {
    page = await listConsoleContacts(db, cursors, projectId, listInput(query, cursor));
  } catch (error) {
    return c.html(<ContactsPage {...props} errors={formErrors(error)} />, 422);
  }
  if (refusal) return c.html(<ContactsPage {...props} page={page} {...refusal} />, 422);
  return c.html(<ContactsPage {...props} page={page} />);
}
