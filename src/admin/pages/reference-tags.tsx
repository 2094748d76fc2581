import { Hono, type Context } from "hono";
import { notFound } from "../../errors.ts";
import { isoNow } from "../../lib/time.ts";
import { findTag } from "../../reference/repository.ts";
import { contactsTagged, moveTagStep, renameTag } from "../../reference/tags.ts";
import { askToConfirm, confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { field } from "../security.ts";
import { Field, noErrors, PostForm, type FormErrors } from "../ui.tsx";
import { attempt, listPath, RecordPage } from "./reference-record.tsx";
import { recordPath } from "./reference-sections.tsx";

/**
 * A tag's page (docs/admin.md §3): rename it, merge it into another tag, delete it. Merge
 * and Delete change every contact that has the tag, through the API's PATCH
 * (src/reference/tags.ts), and ask for a confirmation that says how many.
 */
export const referenceTagPages = new Hono<AdminEnv>();

/** At most this many steps of src/reference/tags.ts per action (TAG_STEP contacts each): a runaway never holds the page forever. */
const MAX_STEPS = 10_000;

const tag = async (c: Context<AdminEnv>) => {
  const row = await c.var.deps.db.selectFrom("tags").select(["id", "name"]).where("project_id", "=", c.var.project.id).where("id", "=", c.req.param("id")!).executeTakeFirst();
  if (!row) throw notFound("Tag");
  return row;
};

const IDS = { name: "edit-name", into: "merge-into" };

const TagPage = async (p: { c: Context<AdminEnv>; row: { id: string; name: string }; values?: Record<string, string>; errors?: FormErrors }) => {
  const { c, row } = p;
  const tagged = await contactsTagged(c.var.deps.db, row.id);
  const edit = (
    <>
      <Field label="Name" name="name" id={IDS.name} value={p.values?.name ?? row.name} required hint="1–64 characters; contacts show the new name." error={p.errors?.fields.name} />
      <button type="submit">Rename tag</button>
    </>
  );
  const merge = (
    <section class="card" aria-labelledby="merge-tag">
      <h2 id="merge-tag">Merge into another tag</h2>
      <PostForm action={`${recordPath(c, "tag", row.id)}/merge`} token={c.var.session.csrfToken} label="Merge tag">
        <Field label="Merge into" name="into" id={IDS.into} value={p.values?.into} required hint="The other tag's name or id. Its contacts get it in place of this one, which then goes." error={p.errors?.fields.into} />
        <button type="submit" class="secondary">
          Merge tag…
        </button>
      </PostForm>
    </section>
  );
  const facts = (
    <dl class="props card">
      <dt>Id</dt>
      <dd class="mono">{row.id}</dd>
      <dt>Contacts</dt>
      <dd>{tagged.toLocaleString("en")} (not counting the trash)</dd>
    </dl>
  );
  const remove = { says: "Takes the tag off every contact that has it (each records the change), then deletes it.", button: "Delete tag" };
  return <RecordPage c={c} kind="tag" name={row.name} ids={IDS} errors={p.errors} edit={edit} more={merge} remove={remove} facts={facts} />;
};

referenceTagPages.get("/tags/:id", async (c) => c.html(await TagPage({ c, row: await tag(c) })));

referenceTagPages.post("/tags/:id", async (c) => {
  const row = await tag(c);
  const values = { name: field(c, "name") };
  const errors = await attempt(c, { name: "Name" }, (trx) => renameTag(trx, c.var.project.id, row.id, values.name));
  if (errors) return c.html(await TagPage({ c, row, values, errors }), 422);
  return c.redirect(listPath(c, "tag", "saved"), 303);
});

/** Moves the tag off its contacts step by step (onto `intoId`, or onto nothing); a refusal comes back as errors. */
async function moveTag(c: Context<AdminEnv>, fromId: string, intoId: string | null): Promise<FormErrors | null> {
  for (let step = 0; step < MAX_STEPS; step++) {
    let done = false;
    const errors = await attempt(c, {}, async (trx) => {
      done = (await moveTagStep(trx, c.var.project.id, fromId, intoId, isoNow(c.var.deps.clock))).done;
    });
    if (errors || done) return errors;
  }
  const errors = noErrors();
  errors.general.push("Contacts are still being given this tag; try again.");
  return errors;
}

const contactsSentence = (n: number) => (n === 1 ? "1 contact has" : `${n.toLocaleString("en")} contacts have`);

referenceTagPages.post("/tags/:id/merge", async (c) => {
  const row = await tag(c);
  const values = { into: field(c, "into").trim() };
  const into = values.into ? await findTag(c.var.deps.db, c.var.project.id, values.into) : undefined;
  if (!into || into.id === row.id) {
    const errors = noErrors();
    errors.fields.into = into ? "Merge into must name another tag." : `Merge into names no tag of this project${values.into ? `: ${values.into}` : ""}.`;
    return c.html(await TagPage({ c, row, values, errors }), 422);
  }
  if (!confirmed(c)) {
    const tagged = await contactsTagged(c.var.deps.db, row.id);
    return askToConfirm(c, {
      title: `Merge the tag "${row.name}" into "${into.name}"?`,
      consequence: (
        <p>
          {contactsSentence(tagged)} "{row.name}": each gets "{into.name}" in its place, recorded as a change of the contact (a contact.updated event each). Then "{row.name}" is
          deleted. This cannot be undone.
        </p>
      ),
      button: "Merge tags",
      back: recordPath(c, "tag", row.id),
      section: "reference",
      carry: { into: into.id },
    });
  }
  const errors = await moveTag(c, row.id, into.id);
  if (errors) return c.html(await TagPage({ c, row, values, errors }), 409);
  return c.redirect(listPath(c, "tag", "merged"), 303);
});

referenceTagPages.post("/tags/:id/delete", async (c) => {
  const row = await tag(c);
  if (!confirmed(c)) {
    const tagged = await contactsTagged(c.var.deps.db, row.id);
    return askToConfirm(c, {
      title: `Delete the tag "${row.name}"?`,
      consequence: (
        <p>
          {contactsSentence(tagged)} it: it is taken off each, recorded as a change of the contact (a contact.updated event each), then deleted. This cannot be undone.
        </p>
      ),
      button: "Delete tag",
      back: recordPath(c, "tag", row.id),
      section: "reference",
    });
  }
  const errors = await moveTag(c, row.id, null);
  if (errors) return c.html(await TagPage({ c, row, errors }), 409);
  return c.redirect(listPath(c, "tag", "deleted"), 303);
});
