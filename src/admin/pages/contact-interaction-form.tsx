import { Hono, type Context } from "hono";
import type { FC } from "hono/jsx";
import { requireContactNumber } from "../../contacts/service.ts";
import { ApiError } from "../../errors.ts";
import { validationFailure } from "../../http/validation.ts";
import { CreateInteractionBody } from "../../interactions/schemas.ts";
import { createInteraction } from "../../interactions/service.ts";
import { isoNow } from "../../lib/time.ts";
import { formErrors, write } from "../actions.ts";
import type { AdminEnv } from "../env.ts";
import { asUtc, field } from "../security.ts";
import { ErrorSummary, Field, noErrors, PostForm, projectPath, Select, TextArea, type FormErrors } from "../ui.tsx";
import { contactPath, idOf } from "./contact-common.ts";

/**
 * Adding to a contact's timeline from its page (docs/admin.md §3): "Add note"
 * (a generic note), and an interaction of any of the project's types with its date, notes
 * and fields, through the same createInteraction and CreateInteractionBody as
 * `POST /contacts/{contactId}/interactions` (docs/api.md §12.2): the API's validation and
 * messages, `interaction_log.created`. Interaction types carry no field definitions
 * (docs/api.md §10.2), so a log's fields are typed as `name: value` lines.
 */

/** What the two forms held when refused, and their errors: one form's at a time. */
export interface InteractionFormState {
  note?: string;
  interaction?: Record<"interactionTypeId" | "date" | "note" | "fields", string>;
  noteErrors?: FormErrors;
  interactionErrors?: FormErrors;
}

export type InteractionType = { id: string; name: string };

/** The interaction form's element ids, by field name (its errors link to them). */
const IDS = { interactionTypeId: "f-interaction-type", date: "f-interaction-date", note: "f-interaction-note", fields: "f-interaction-fields" };

/** The note form and the interaction form, above the timeline. `here` is the contact page's path. */
export const AddToTimeline: FC<{ c: Context<AdminEnv>; here: string; types: InteractionType[]; state: InteractionFormState }> = ({ c, here, types, state }) => {
  const values = state.interaction;
  const errors = state.interactionErrors;
  const token = c.var.session.csrfToken;
  const first = types[0]?.id ?? "note";
  return (
    <>
      <div class="card">
        <ErrorSummary errors={state.noteErrors} ids={{ note: idOf("note") }} />
        <PostForm action={`${here}/notes#timeline`} token={token} label="Add note">
          <TextArea label="Note" name="note" id={idOf("note")} value={state.note} error={state.noteErrors?.fields.note} rows={3} />
          <button type="submit">Add note</button>
        </PostForm>
      </div>
      <details class="card add-interaction" id="add-interaction" open={errors ? true : undefined}>
        <summary>Log a call, meeting or other interaction</summary>
        <ErrorSummary errors={errors} ids={IDS} />
        <PostForm action={`${here}/interactions#timeline`} token={token} label="Add interaction">
          <div class="row">
            <Select
              label="Type"
              name="interactionTypeId"
              id={IDS.interactionTypeId}
              value={values?.interactionTypeId ?? first}
              error={errors?.fields.interactionTypeId}
              options={[...types.map((t): [string, string] => [t.id, t.name]), ["note", "Note"]]}
            />
            <Field label="When (UTC)" name="date" id={IDS.date} type="datetime-local" value={values?.date} error={errors?.fields.date} hint="Blank: now." />
          </div>
          <TextArea label="Notes" name="note" id={IDS.note} value={values?.note} error={errors?.fields.note} rows={3} />
          <TextArea label="Fields" name="fields" id={IDS.fields} value={values?.fields} error={errors?.fields.fields} rows={3} />
          <p class="hint">
            One a line, as <code>name: value</code> (<code>outcome: quote requested</code>). Interaction types are listed under{" "}
            <a href={projectPath(c.var.project, "reference")}>Reference data</a>.
          </p>
          <button type="submit">Add interaction</button>
        </PostForm>
      </details>
    </>
  );
};

/** `name: value` lines → the log's fields; a line without a name, or a name given twice, is refused at "Fields". */
export function parseFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [i, line] of text.split(/\r\n?|\n/).entries()) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    const name = colon < 0 ? "" : line.slice(0, colon).trim();
    if (name === "") throw new ApiError("ERR_FORM_VALIDATION", `Line ${i + 1} of Fields needs a name before a colon, as outcome: quote requested.`, "fields");
    if (Object.hasOwn(fields, name)) throw new ApiError("ERR_FORM_VALIDATION", `Fields names ${name} twice.`, "fields");
    fields[name] = line.slice(colon + 1).trim();
  }
  return fields;
}

/** An ApiError of the body → the interaction form's errors: `fields.<name>` at "Fields", the others at their field. */
function interactionErrors(error: unknown): FormErrors {
  if (error instanceof ApiError && error.fieldName?.startsWith("fields.")) {
    const errors = noErrors();
    errors.fields.fields = error.message;
    return errors;
  }
  return formErrors(error, { uniqueIdentifier: "fields" });
}

/** Re-renders the contact's page with the forms' state (src/admin/pages/contact-page.tsx). */
export type ShowPage = (c: Context<AdminEnv>, state: InteractionFormState, status: 422) => Promise<Response>;

/** The routes of the two forms; a refusal shows the page again with the form's values and errors, 422. */
export function interactionPages(show: ShowPage) {
  const pages = new Hono<AdminEnv>();

  /** A note, as POST /v1/contacts/{id}/interactions with `type: "note"` adds one. The console refuses an empty note (docs/admin.md §3). */
  pages.post("/:contactId/notes", async (c) => {
    const n = requireContactNumber(c.req.param("contactId"));
    const note = field(c, "note").replace(/\r\n?/g, "\n");
    const refused = (error: unknown) => show(c, { note, noteErrors: formErrors(error) }, 422);
    if (note.trim() === "") return refused(new ApiError("ERR_FORM_VALIDATION", "Write the note to add.", "note"));
    return add(c, n, { type: "note", note }, refused, "noted");
  });

  pages.post("/:contactId/interactions", async (c) => {
    const n = requireContactNumber(c.req.param("contactId"));
    const values = {
      interactionTypeId: field(c, "interactionTypeId"),
      date: field(c, "date").trim(),
      note: field(c, "note").replace(/\r\n?/g, "\n"),
      fields: field(c, "fields").replace(/\r\n?/g, "\n"),
    };
    const refused = (error: unknown) => show(c, { interaction: values, interactionErrors: interactionErrors(error) }, 422);
    let fields: Record<string, string>;
    try {
      fields = parseFields(values.fields);
    } catch (error) {
      return refused(error);
    }
    if (values.note.trim() === "" && Object.keys(fields).length === 0) {
      return refused(new ApiError("ERR_FORM_VALIDATION", "Write notes or at least one field of the interaction.", "note"));
    }
    const body: Record<string, unknown> = values.interactionTypeId === "note" ? { type: "note" } : { interactionTypeId: values.interactionTypeId };
    if (values.note.trim() !== "") body.note = values.note;
    if (values.date !== "") body.date = asUtc(values.date);
    if (Object.keys(fields).length > 0) body.fields = fields;
    return add(c, n, body, refused, "logged");
  });

  /** Validates `body` as the API does and adds the log in the console's write queue; back to the page's timeline. */
  async function add(c: Context<AdminEnv>, n: number, body: Record<string, unknown>, refused: (error: unknown) => Promise<Response>, done: string) {
    const parsed = CreateInteractionBody.safeParse(body);
    if (!parsed.success) return refused(validationFailure(parsed.error, { input: body, target: "json" }));
    const projectId = c.var.project.id;
    try {
      const now = isoNow(c.var.deps.clock);
      const { log } = await write(c, projectId, (trx) => createInteraction(trx, projectId, n, parsed.data, now));
      return c.redirect(`${contactPath(c, log.contactId)}?done=${done}#timeline`, 303);
    } catch (error) {
      return refused(error);
    }
  }

  return pages;
}
