import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AdminEnv } from "./env.ts";
import { field } from "./security.ts";
import { Layout, PostForm, type Section } from "./ui.tsx";

/**
 * Destructive actions ask first (docs/admin.md §2): revoke, delete, erase, merge. The
 * button on a list posts without `confirm`, and gets this page back, which says what
 * will happen and posts again with `confirm=yes`. Nothing is done until that second post,
 * so one click, a double click or a replayed form never destroys anything.
 */
export interface Confirmation {
  /** The page's heading, a question ("Revoke the key "Sync"?"). */
  title: string;
  /** What will happen, in a sentence or two. */
  consequence: Child;
  /** The confirming button's text ("Revoke key"). */
  button: string;
  /** Where "Cancel" leads. */
  back: string;
  section?: Section;
  /** Fields to post again with the confirmation (the form's own choices). */
  carry?: Record<string, string | string[]>;
}

/** The action was confirmed on its confirmation page. */
export const confirmed = (c: Context<AdminEnv>) => field(c, "confirm") === "yes";

/** The confirmation page for the action posted to this same path. */
export function askToConfirm(c: Context<AdminEnv>, ask: Confirmation) {
  const carry = Object.entries(ask.carry ?? {}).flatMap(([name, value]) => [value].flat().map((v) => [name, v] as const));
  return c.html(
    <Layout title={ask.title} session={c.var.session} project={c.var.project} section={ask.section}>
      <div class="card confirm">
        <h1>{ask.title}</h1>
        <div class="consequence">{ask.consequence}</div>
        <PostForm action={c.req.path} token={c.var.session.csrfToken} class="actions" label={ask.title}>
          <input type="hidden" name="confirm" value="yes" />
          {carry.map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
          <button type="submit" class="danger">
            {ask.button}
          </button>
          <a href={ask.back} class="button secondary">
            Cancel
          </a>
        </PostForm>
      </div>
    </Layout>,
  );
}
