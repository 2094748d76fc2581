import { Hono, type Context } from "hono";
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo } from "../../auth/keys.ts";
import { parseScopes, SCOPES, type Scope } from "../../auth/scopes.ts";
import { notFound } from "../../errors.ts";
import { isoNow, toIso } from "../../lib/time.ts";
import { write } from "../actions.ts";
import { confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { asUtc, field, fields } from "../security.ts";
import { showOnceAfterRedirect, takeShownOnce } from "../shown-once.ts";
import { askToRevoke, isBootstrapKey } from "./key-revoke.tsx";
import { Checkbox, ErrorSummary, Field, Layout, noErrors, Notice, PostForm, projectPath, ShownOnce, TableWrap, Time, type FormErrors } from "../ui.tsx";

/**
 * API keys of a project (docs/api.md §2, docs/admin.md §3): list, create with chosen scopes (the key is
 * shown once, after a redirect, never in a URL: docs/admin.md §2), revoke after a
 * confirmation. The same services as `crm key create|list|revoke`.
 */
export const keyPages = new Hono<AdminEnv>();

interface KeyValues {
  name: string;
  scopes: string[];
  expiresAt: string;
}
const blank: KeyValues = { name: "", scopes: [], expiresAt: "" };
const ids = { name: "f-name", scopes: `f-scopes-${SCOPES[0].replace(":", "-")}`, expiresAt: "f-expiresAt" };


/** The form's values, or what is wrong with them; an expiry is judged against the service's clock (docs/api.md §2). */
function readKeyForm(c: Context<AdminEnv>) {
  const values: KeyValues = { name: field(c, "name").trim(), scopes: fields(c, "scopes"), expiresAt: field(c, "expiresAt").trim() };
  const errors = noErrors();
  if (values.name.length > 255) errors.fields.name = "Name must have at most 255 characters.";
  const scopes = parseScopes(values.scopes.join(","));
  if (!scopes) errors.fields.scopes = values.scopes.length === 0 ? "Choose at least one scope." : `Scopes are ${SCOPES.join(", ")}.`;
  let expiresAt: string | null = null;
  if (values.expiresAt !== "") {
    expiresAt = toIso(asUtc(values.expiresAt));
    if (!expiresAt) errors.fields.expiresAt = "Expires must be a date and time, such as 2030-01-31T12:00.";
    else if (Date.parse(expiresAt) <= c.var.deps.clock.now()) errors.fields.expiresAt = "Expires must be in the future.";
  }
  if (Object.keys(errors.fields).length > 0 || !scopes) return { values, errors };
  return { values, data: { name: values.name || null, scopes, expiresAt } };
}

const ScopeChoices = (p: { checked: string[]; error?: string }) => (
  <fieldset class={p.error ? "invalid" : undefined} aria-describedby={p.error ? "f-scopes-error" : undefined}>
    <legend>Scopes</legend>
    {p.error ? (
      <p class="error" id="f-scopes-error">
        {p.error}
      </p>
    ) : null}
    {SCOPES.map((scope) => (
      <Checkbox label={scope} name="scopes" value={scope} checked={p.checked.includes(scope)} id={`f-scopes-${scope.replace(":", "-")}`} />
    ))}
  </fieldset>
);

const KeyRow = (p: { c: Context<AdminEnv>; k: ApiKeyInfo }) => {
  const { k } = p;
  const nameId = `key-${k.id}`;
  return (
    <tr>
      <td id={nameId} data-label="Name">
        {k.name ?? <span class="none">Unnamed</span>} <span class="mono none id">{k.id}</span>
        {isBootstrapKey(k) ? <span class="hint key-note">Made at the server's first start</span> : null}
      </td>
      <td class="mono nowrap" data-label="Hint">
        {k.hint}
      </td>
      <td data-label="Scopes">{k.scopes.join(", ")}</td>
      <td data-label="Created">
        <Time at={k.createdAt} />
      </td>
      <td data-label="Last used">
        <Time at={k.lastUsedAt} />
      </td>
      <td data-label="Expires">
        <Time at={k.expiresAt} />
      </td>
      <td data-label="Revoked">
        {k.revokedAt ? (
          <Time at={k.revokedAt} />
        ) : (
          <PostForm action={`${projectPath(p.c.var.project, "keys")}/${encodeURIComponent(k.id)}/revoke`} token={p.c.var.session.csrfToken} class="inline">
            <button type="submit" class="danger" aria-describedby={nameId}>
              Revoke
            </button>
          </PostForm>
        )}
      </td>
    </tr>
  );
};

const KeysPage = (p: { c: Context<AdminEnv>; keys: ApiKeyInfo[]; values?: KeyValues; errors?: FormErrors; created?: string; done?: string }) => {
  const { c } = p;
  const values = p.values ?? blank;
  const env = c.var.deps.config.CRM_ENV;
  return (
    <Layout title="API keys" session={c.var.session} project={c.var.project} section="keys">
      <h1>API keys</h1>
      <Notice text={p.created ? "Key created." : p.done === "revoked" ? "Key revoked: it is refused from now on." : null} />
      {p.created ? (
        <ShownOnce label="New API key" value={p.created} note="Copy it now: only its hash is kept, so it is never shown again, not even when this page is reloaded." />
      ) : null}
      <p class="hint">
        This server is the {env} environment: its keys start with {env === "production" ? "crm_live_" : "crm_test_"}.
      </p>
      {p.keys.length === 0 ? (
        <p class="none">No keys yet.</p>
      ) : (
        <TableWrap label="API keys of this project">
          <table class="keys paired">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Hint</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Revoked</th>
              </tr>
            </thead>
            <tbody>
              {p.keys.map((k) => (
                <KeyRow c={c} k={k} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <section class="card" aria-labelledby="new-key">
        <h2 id="new-key">New key</h2>
        <ErrorSummary errors={p.errors} ids={ids} />
        <PostForm action={projectPath(c.var.project, "keys")} token={c.var.session.csrfToken}>
          <Field label="Name" name="name" value={values.name} hint="To recognise the key by, such as the integration that uses it." error={p.errors?.fields.name} />
          <ScopeChoices checked={values.scopes} error={p.errors?.fields.scopes} />
          <Field
            label="Expires (UTC)"
            name="expiresAt"
            id="f-expiresAt"
            type="datetime-local"
            value={values.expiresAt}
            hint="Optional: from this time on the key is refused."
            error={p.errors?.fields.expiresAt}
          />
          <button type="submit">Create key</button>
        </PostForm>
      </section>
    </Layout>
  );
};

/** Newest first. */
const keysOf = async (c: Context<AdminEnv>) => (await listApiKeys(c.var.deps.db, c.var.project.id)).reverse();

/** The page; a key just made is shown here once (docs/admin.md §2), and a reload shows it no more. */
keyPages.get("/", async (c) => {
  const once = takeShownOnce(c);
  const created = once?.label === "New API key" ? once.value : undefined;
  return c.html(<KeysPage c={c} keys={await keysOf(c)} done={c.req.query("done")} created={created} />);
});

/** Creates the key, then redirects to the page that shows it once: a reload is a GET, so it never makes a second key. */
keyPages.post("/", async (c) => {
  const { values, data, errors } = readKeyForm(c);
  if (!data) return c.html(<KeysPage c={c} keys={await keysOf(c)} values={values} errors={errors} />, 422);
  const projectId = c.var.project.id;
  const env = c.var.deps.config.CRM_ENV;
  const { id, key } = await write(c, projectId, (trx) => createApiKey(trx, { projectId, scopes: data.scopes as Scope[], name: data.name, expiresAt: data.expiresAt, env, now: isoNow(c.var.deps.clock) }));
  // Never in a URL (docs/api.md §2): sealed into the one-time cookie the next page reads.
  return showOnceAfterRedirect(c, { label: "New API key", value: key, about: id }, projectPath(c.var.project, "keys"));
});

/** Revoke: the first post asks (the confirmation page), the confirmed one revokes (docs/admin.md §2). */
keyPages.post("/:keyId/revoke", async (c) => {
  const project = c.var.project;
  const id = c.req.param("keyId");
  // A key of another project is not found here, as the API would say.
  const k = (await listApiKeys(c.var.deps.db, project.id)).find((key) => key.id === id);
  if (!k) throw notFound("API key");
  if (k.revokedAt) return c.redirect(`${projectPath(project, "keys")}?done=revoked`, 303);
  if (!confirmed(c)) return askToRevoke(c, k);
  const now = isoNow(c.var.deps.clock);
  if (!(await write(c, project.id, (trx) => revokeApiKey(trx, id, now, project.id)))) throw notFound("API key");
  c.var.deps.keys.forget(id);
  return c.redirect(`${projectPath(project, "keys")}?done=revoked`, 303);
});
