import { Hono, type Context } from "hono";
import type { Transaction } from "kysely";
import { CreateContactBody } from "../../contacts/schemas.ts";
import type { Database } from "../../storage/schema.ts";
import { isoNow } from "../../lib/time.ts";
import { findTagIds, resolveTags } from "../../reference/repository.ts";
import { addContactType, addCustomField, addInteractionType, ReferenceInputError } from "../../reference/service.ts";
import { write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { field } from "../security.ts";
import { Layout, noErrors, Notice, projectPath } from "../ui.tsx";
import { referenceEditPages } from "./reference-edit.tsx";
import { DONE_EDITS } from "./reference-record.tsx";
import { ContactTypes, CustomFields, InteractionTypes, KINDS, loadReference, Tags, type Failed, type Kind, type ReferenceData } from "./reference-sections.tsx";
import { referenceTagPages } from "./reference-tags.tsx";

/**
 * Reference data of a project (docs/api.md §10, docs/admin.md §3): contact types, interaction types, custom
 * fields and tags, listed and created under the same rules as the CLI (src/reference/service.ts);
 * each record's own page edits and removes it (reference-edit.tsx, reference-tags.tsx).
 */
export const referencePages = new Hono<AdminEnv>();
referencePages.route("/", referenceEditPages);
referencePages.route("/", referenceTagPages);

const DONE: Record<string, string> = {
  "contact-type": "Contact type created.",
  "interaction-type": "Interaction type created.",
  "custom-field": "Custom field created.",
  tag: "Tag created.",
  ...DONE_EDITS,
};

const ReferencePage = (p: { c: Context<AdminEnv>; data: ReferenceData; failed?: Failed; done?: string }) => (
  <Layout title="Reference data" session={p.c.var.session} project={p.c.var.project} section="reference">
    <h1>Reference data</h1>
    <Notice text={p.done ? DONE[p.done] : null} />
    <ContactTypes c={p.c} rows={p.data.contactTypes} failed={p.failed} />
    <InteractionTypes c={p.c} rows={p.data.interactionTypes} failed={p.failed} />
    <CustomFields c={p.c} rows={p.data.customFields} failed={p.failed} />
    <Tags c={p.c} rows={p.data.tags} failed={p.failed} />
  </Layout>
);

const load = (c: Context<AdminEnv>) => loadReference(c.var.deps.db, c.var.project.id);

referencePages.get("/", async (c) => c.html(<ReferencePage c={c} data={await load(c)} done={c.req.query("done")} />));

/**
 * Creates one record in the write queue; a refusal of the rules (ReferenceInputError) is
 * shown at its field with 422, success goes back to the list (post/redirect/get).
 */
async function create(c: Context<AdminEnv>, kind: Kind, values: Record<string, string>, work: (trx: Transaction<Database>) => Promise<unknown>) {
  const project = c.var.project;
  try {
    await write(c, project.id, work);
  } catch (error) {
    if (!(error instanceof ReferenceInputError)) throw error;
    const errors = noErrors();
    const label = (KINDS[kind].labels as Record<string, string>)[error.field] ?? error.field;
    errors.fields[error.field] = `${label} ${error.predicate}.`;
    return c.html(<ReferencePage c={c} data={await load(c)} failed={{ kind, values, errors }} />, 422);
  }
  return c.redirect(`${projectPath(project, "reference")}?done=${kind}#${KINDS[kind].path}`, 303);
}

referencePages.post("/contact-types", (c) => {
  const values = { name: field(c, "name"), category: field(c, "category"), isDefault: field(c, "isDefault") };
  const input = { name: values.name, category: values.category, isDefault: values.isDefault !== "" };
  return create(c, "contact-type", values, (trx) => addContactType(trx, c.var.project.id, input, isoNow(c.var.deps.clock)));
});

referencePages.post("/interaction-types", (c) => {
  const values = { name: field(c, "name") };
  return create(c, "interaction-type", values, (trx) => addInteractionType(trx, c.var.project.id, values.name, isoNow(c.var.deps.clock)));
});

referencePages.post("/custom-fields", (c) => {
  const values = { title: field(c, "title"), type: field(c, "type"), options: field(c, "options"), unique: field(c, "unique") };
  const input = { ...values, unique: values.unique !== "" };
  return create(c, "custom-field", values, (trx) => addCustomField(trx, c.var.project.id, input, isoNow(c.var.deps.clock)));
});

/** The API's own rule for a tag name (a contact's `tags`, docs/api.md §11): 1–64 characters. */
const tagRule = CreateContactBody.pick({ tags: true });

referencePages.post("/tags", (c) => {
  const values = { name: field(c, "name") };
  const name = values.name.trim();
  const projectId = c.var.project.id;
  return create(c, "tag", values, async (trx) => {
    const checked = tagRule.safeParse({ tags: [name] });
    if (!checked.success) throw new ReferenceInputError("name", checked.error.issues[0]!.message.replace(/\.$/, ""));
    // The API reuses a tag of the same name (any case); here, creating one that exists is a mistake worth saying.
    if (await findTagIds(trx, projectId, [name])) throw new ReferenceInputError("name", "is already used by a tag");
    await resolveTags(trx, projectId, [name], isoNow(c.var.deps.clock));
  });
});
