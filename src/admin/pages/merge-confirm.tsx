import { Hono, type Context } from "hono";
import { parseContactId } from "../../contacts/service.ts";
import { ApiError } from "../../errors.ts";
import { isoNow } from "../../lib/time.ts";
import { mergeContacts } from "../../merges/merge.ts";
import { UNDO_DAYS } from "../../merges/repository.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, PostForm, projectPath, type FormErrors } from "../ui.tsx";
import { contactPath, loadReference } from "./contact-common.ts";
import { compare, type Comparison } from "./duplicates-compare.tsx";
import { arrange, comparePath, listed, fieldSpecs, idsOf, loadSides, mergeFields, namesOf, sideLabel, stateAfter, valueText, ALL_TAGS, type Side } from "./merge-choices.ts";

/**
 * The merge's confirmation step and the merge itself (docs/api.md §20.2): "merge N contacts
 * into CR-x; undo possible for 30 days", the contact as the merge would leave it, then the
 * same mergeContacts as `POST /contacts/{id}/merge`, in the console's write queue
 * (docs/operations.md §3.1), with `fields` built from the comparison's choices. The browser
 * lands on the survivor's page.
 */
export const mergeConfirmPages = new Hono<AdminEnv>();

const contactsWord = (n: number) => `${n} contact${n === 1 ? "" : "s"}`;

interface PageProps {
  c: Context<AdminEnv>;
  survivor: Side;
  others: Side[];
  fields: Record<string, string>;
  rows: Array<{ label: string; after: string | null; before: string | null }>;
  back: string;
  errors?: FormErrors;
}

const ConfirmPage = ({ c, survivor, others, fields, rows, back, errors }: PageProps) => {
  const title = `Merge ${contactsWord(others.length)} into ${survivor.contactId}`;
  const byNumber = [...others].sort((a, b) => a.state.contactNumber - b.state.contactNumber);
  const ids = byNumber.map((o) => o.contactId);
  return (
    <Layout title={title} session={c.var.session} project={c.var.project} section="duplicates">
      <h1>{title}</h1>
      <ErrorSummary errors={errors} />
      <div class="card">
        <p>
          {listed(byNumber.map(sideLabel))} will be merged into <strong>{sideLabel(survivor)}</strong>: {ids.length === 1 ? "it leaves" : "they leave"} the contact list,{" "}
          {ids.length === 1 ? "its" : "their"} interaction logs move to {survivor.contactId}, and {listed(ids)} will lead to {survivor.contactId}.
        </p>
        <p>
          <strong>Undo is possible for {UNDO_DAYS} days</strong>, from {survivor.contactId}'s timeline.
        </p>
      </div>
      <h2>{survivor.contactId} after the merge</h2>
      <dl class="props card">
        {rows.map((r) => (
          <>
            <dt>{r.label}</dt>
            <dd class="prewrap">
              {r.after ?? <span class="none">—</span>}
              {r.after !== r.before ? <span class="hint"> (now: {r.before ?? "empty"})</span> : null}
            </dd>
          </>
        ))}
      </dl>
      <PostForm action={`${projectPath(c.var.project, "duplicates")}/merge`} token={c.var.session.csrfToken} class="card" label="Merge contacts">
        <input type="hidden" name="survivor" value={survivor.contactId} />
        <input type="hidden" name="ids" value={ids.join(",")} />
        {Object.entries(fields).map(([name, value]) => (
          <input type="hidden" name={`f.${name}`} value={value} />
        ))}
        <div class="actions">
          <button type="submit">Confirm merge</button>
          <a href={back}>Back to the comparison</a>
        </div>
      </PostForm>
    </Layout>
  );
};

/** A comparison as a request carries it: `ids`, `survivor` and the `f.<field>` choices, from the query or the posted form. */
function comparisonOf(read: (name: string) => string | undefined, names: string[]): Comparison {
  const survivor = read("survivor")?.trim().toUpperCase() || undefined;
  const ids = idsOf([survivor, read("ids")].filter(Boolean).join(","));
  const choices: Record<string, string> = {};
  for (const name of names) if (name.startsWith("f.")) choices[name.slice(2)] = read(name)!.trim();
  return { ids, survivor, choices };
}

/**
 * The confirmation of a comparison: the contacts as they are now, the fields the merge
 * would send and the contact it would leave. A contact merged or deleted since, or a
 * choice the merge refuses, sends the person back to the comparison with the reason.
 */
async function confirmation(c: Context<AdminEnv>, comparison: Comparison, errors?: FormErrors, status: 200 | 402 | 404 | 409 | 422 = 200) {
  const { db } = c.var.deps;
  const projectId = c.var.project.id;
  const [{ sides, gone }, reference] = await Promise.all([loadSides(db, projectId, comparison.ids), loadReference(db, projectId)]);
  if (gone.length || sides.length < 2) return compare(c, comparison, errors, gone.length ? 409 : 422);
  const { survivor, others } = arrange(sides, comparison.survivor);
  const titles = new Map(reference.customFields.map((f) => [f.id, f.title]));
  const specs = fieldSpecs(sides, titles);
  let fields: Record<string, string>;
  let after;
  try {
    fields = mergeFields(specs, survivor, others, comparison.choices);
    after = stateAfter(survivor, others, fields);
  } catch (error) {
    return compare(c, comparison, formErrors(error), 422);
  }
  const names = namesOf(sides);
  const rows = specs
    .map((spec) => ({ label: spec.label, after: valueText(spec, after, names), before: valueText(spec, survivor.state, names) }))
    .filter((r) => r.after !== null || r.before !== null);
  const choices = { ...fields, ...(fields.tags ? {} : { tags: ALL_TAGS }) };
  const back = comparePath(c, comparison.ids, survivor.contactId, choices);
  return c.html(<ConfirmPage c={c} survivor={survivor} others={others} fields={fields} rows={rows} back={back} errors={errors} />, status);
}

mergeConfirmPages.get("/compare", (c) => compare(c, comparisonOf((n) => c.req.query(n), Object.keys(c.req.query()))));

mergeConfirmPages.get("/merge", (c) => confirmation(c, comparisonOf((n) => c.req.query(n), Object.keys(c.req.query()))));

/** The merge: mergeContacts with the confirmed `fields`; a refusal (a contact merged since, a quota, a choice) is shown on the confirmation. */
mergeConfirmPages.post("/merge", async (c) => {
  const form = c.var.form;
  const read = (name: string) => (typeof form[name] === "string" ? (form[name] as string) : undefined);
  const comparison = comparisonOf(read, Object.keys(form).filter((k) => typeof form[k] === "string"));
  const survivor = comparison.survivor ? parseContactId(comparison.survivor) : null;
  const others = comparison.ids.filter((id) => id !== comparison.survivor);
  if (survivor === null || others.length === 0) return compare(c, comparison, formErrors(new ApiError("ERR_FORM_VALIDATION", "Choose a contact to keep and at least one other.")), 422);
  const fields = Object.fromEntries(Object.entries(comparison.choices).filter(([k, v]) => !(k === "tags" && v === ALL_TAGS)));
  const projectId = c.var.project.id;
  try {
    const now = isoNow(c.var.deps.clock);
    const result = await write(c, projectId, (trx) => mergeContacts(trx, projectId, survivor, { contactIds: others, fields }, now));
    return c.redirect(`${contactPath(c, result.contact.contactId)}?done=merged#timeline`, 303);
  } catch (error) {
    const errors = formErrors(error);
    const status = (error as { status?: number }).status;
    return confirmation(c, comparison, errors, status === 402 || status === 404 || status === 409 ? status : 422);
  }
});
