import type { Context } from "hono";
import type { Child, FC } from "hono/jsx";
import { loadReference } from "./contact-common.ts";
import type { AdminEnv } from "../env.ts";
import { ErrorSummary, Layout, projectPath, Time, type FormErrors } from "../ui.tsx";
import {
  ALL_TAGS,
  arrange,
  defaultChoice,
  differing,
  fieldSpecs,
  listed,
  loadSides,
  namesOf,
  sideLabel,
  stateAfter,
  valueText,
  type FieldSpec,
  type Side,
} from "./merge-choices.ts";

/**
 * The comparison of possible duplicates (docs/api.md §20, "a side-by-side comparison with a
 * choice per field"): the contacts side by side (stacked on a phone), the contact to keep,
 * and for each field that differs one choice per contact, starting at what the merge's
 * default rule would take (mergedState). "Merge" goes to the confirmation step
 * (src/admin/pages/merge-confirm.tsx); nothing is written here.
 */

/** What a comparison is of: the contactIds, the one to keep, and choices already made (`f.<field>`). */
export interface Comparison {
  ids: string[];
  survivor?: string;
  choices: Record<string, string>;
}

const optionId = (name: string, value: string) => `o-${name}-${value}`.replace(/[^A-Za-z0-9_-]/g, "-");

/**
 * One radio inside its label, in the grid that puts the contacts side by side (one column
 * each, stacked on a phone); a long value wraps under its radio.
 */
const Option: FC<{ name: string; value: string; checked: boolean; children: Child }> = (p) => (
  <div>
    <label for={optionId(p.name, p.value)}>
      <input type="radio" id={optionId(p.name, p.value)} name={p.name} value={p.value} checked={p.checked} /> {p.children}
    </label>
  </div>
);

const Value: FC<{ text: string | null; from: string }> = ({ text, from }) => (
  <>
    {text === null ? <span class="none">(empty)</span> : <span class="prewrap">{text}</span>} <span class="hint">{from}</span>
  </>
);

/** A field that differs: a group of radios, one per contact (and "all of them" for tags). */
const Choice: FC<{ spec: FieldSpec; sides: Side[]; chosen: string; names: ReturnType<typeof namesOf>; union: string | null }> = ({ spec, sides, chosen, names, union }) => (
  <fieldset>
    <legend>{spec.label}</legend>
    {spec.name === "tags" ? (
      <Option name={`f.${spec.name}`} value={ALL_TAGS} checked={chosen === ALL_TAGS}>
        <Value text={union} from="from all of them" />
      </Option>
    ) : null}
    <div class="row top">
      {sides.map((s) => (
        <Option name={`f.${spec.name}`} value={s.contactId} checked={chosen === s.contactId}>
          <Value text={valueText(spec, s.state, names)} from={`from ${s.contactId}`} />
        </Option>
      ))}
    </div>
  </fieldset>
);

/** The contacts asked for that are not in the list (merged or deleted since the link was made). */
const Gone: FC<{ ids: string[] }> = ({ ids }) =>
  ids.length ? (
    <p class="notice" role="status">
      {listed(ids)} {ids.length === 1 ? "is" : "are"} no longer in the contact list (merged or deleted since), so {ids.length === 1 ? "it is" : "they are"} left out.
    </p>
  ) : null;

interface PageProps {
  c: Context<AdminEnv>;
  comparison: Comparison;
  sides: Side[];
  gone: string[];
  titles: Map<string, string>;
  errors?: FormErrors;
}

const ComparePage = ({ c, comparison, sides, gone, titles, errors }: PageProps) => {
  const duplicates = projectPath(c.var.project, "duplicates");
  const title = `Compare ${sides.length} contacts`;
  if (sides.length < 2) {
    return (
      <Layout title="Compare contacts" session={c.var.session} project={c.var.project} section="duplicates">
        <h1>Compare contacts</h1>
        <ErrorSummary errors={errors} />
        <Gone ids={gone} />
        <p>{sides.length === 0 ? "None of these contacts exists any more" : `Only ${sides[0]!.contactId} is left of these contacts`}: there is nothing to merge.</p>
        <p>
          <a href={duplicates}>Back to duplicates</a>
        </p>
      </Layout>
    );
  }
  const { survivor, others } = arrange(sides, comparison.survivor);
  const merged = stateAfter(survivor, others);
  const names = namesOf(sides);
  const specs = fieldSpecs(sides, titles);
  const choose = differing(specs, sides);
  const same = specs.filter((f) => !choose.includes(f) && valueText(f, sides[0]!.state, names) !== null);
  const tags = specs.find((f) => f.name === "tags")!;
  const chosen = (spec: FieldSpec) => {
    const asked = comparison.choices[spec.name];
    const valid = asked && (asked === ALL_TAGS ? spec.name === "tags" : sides.some((s) => s.contactId === asked));
    return valid ? asked : defaultChoice(spec, survivor, others, merged);
  };
  return (
    <Layout title={title} session={c.var.session} project={c.var.project} section="duplicates">
      <h1>{title}</h1>
      <ErrorSummary errors={errors} />
      <Gone ids={gone} />
      <p class="hint">
        Choose the contact to keep and, for each field that differs, the value it keeps. The others are merged into it: they leave the contact list, their interaction
        logs move to it and their contact ids lead to it. Each field starts at what a merge would keep by default. The merge can be undone for 30 days.
      </p>
      <form method="get" action={`${duplicates}/merge`} aria-label="Merge choices">
        <input type="hidden" name="ids" value={sides.map((s) => s.contactId).join(",")} />
        <fieldset>
          <legend>Contact to keep</legend>
          <div class="row">
            {sides.map((s) => (
              <Option name="survivor" value={s.contactId} checked={s === survivor}>
                <strong>{sideLabel(s)}</strong>
                <br />
                <span class="hint">
                  created <Time at={s.contact.createdAt} />, updated <Time at={s.contact.updatedAt} />
                </span>
              </Option>
            ))}
          </div>
        </fieldset>
        {choose.length === 0 ? <p>These contacts hold the same values in every field.</p> : null}
        {choose.map((spec) => (
          <Choice spec={spec} sides={sides} chosen={chosen(spec)} names={names} union={valueText(tags, merged, names)} />
        ))}
        {same.length ? (
          <section aria-labelledby="same">
            <h2 id="same">The same in all</h2>
            <dl class="props card">
              {same.map((spec) => (
                <>
                  <dt>{spec.label}</dt>
                  <dd class="prewrap">{valueText(spec, sides[0]!.state, names)}</dd>
                </>
              ))}
            </dl>
          </section>
        ) : null}
        <div class="actions">
          <button type="submit">Merge</button>
          <a href={duplicates}>Back to duplicates</a>
        </div>
      </form>
    </Layout>
  );
};

/** Renders the comparison of `comparison.ids` (the ones that are still contacts); `errors` from a refused confirmation. */
export async function compare(c: Context<AdminEnv>, comparison: Comparison, errors?: FormErrors, status: 200 | 404 | 409 | 422 = 200) {
  const { db } = c.var.deps;
  const projectId = c.var.project.id;
  const [{ sides, gone }, reference] = await Promise.all([loadSides(db, projectId, comparison.ids), loadReference(db, projectId)]);
  const titles = new Map(reference.customFields.map((f) => [f.id, f.title]));
  return c.html(<ComparePage c={c} comparison={comparison} sides={sides} gone={gone} titles={titles} errors={errors} />, status);
}
