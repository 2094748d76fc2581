import { Hono, type Context } from "hono";
import { ApiError } from "../../errors.ts";
import { validationFailure } from "../../http/validation.ts";
import { isoNow } from "../../lib/time.ts";
import { checkUrl } from "../../webhooks/address-policy.ts";
import { toWebhook } from "../../webhooks/repository.ts";
import { PatchWebhookBody, RedeliverBody } from "../../webhooks/schemas.ts";
import { inFlightOf } from "../../webhooks/dispatcher.ts";
import { deleteWebhook, patchWebhook, redeliver, requireWebhook, rotateSecret, sendTestPing, type CheckedUrl } from "../../webhooks/service.ts";
import { formErrors, write } from "../actions.ts";
import { confirmed } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { asUtc, field } from "../security.ts";
import { showOnceAfterRedirect, takeShownOnce } from "../shown-once.ts";
import { projectPath } from "../ui.tsx";
import { askToDelete, askToDisable, askToRotate } from "./webhook-confirm.tsx";
import { readHookForm } from "./webhook-edit.tsx";
import { readFilterForm } from "./webhook-filter.tsx";
import { subscriptionPage } from "./webhook-page.tsx";

/**
 * A subscription's page and its actions (docs/webhooks.md §2, docs/admin.md §3, docs/operations.md §3.1), each through the API's
 * service: the test ping outside any transaction, the others in the API's write queue.
 * Delete, Disable and Rotate secret ask first (docs/admin.md §2); a new secret is shown once
 * after a redirect; the ping's outcome is the page that answers it; the rest redirect
 * with a fixed code (post/redirect/get).
 */
export const subscriptionPages = new Hono<AdminEnv>();

const DONE: Record<string, string> = {
  created: "Subscription created.",
  disabled: "Subscription disabled: no event is queued for it until it is enabled.",
  enabled: "Subscription enabled; its count of consecutive failures starts again from 0.",
  filtered: "Filter and ordering saved: they apply to events recorded from now on.",
  edited: "Changes saved.",
  rotated: "Secret rotated. For 24 hours deliveries carry two signatures: the new secret's first, the old one's second.",
};

const here = (c: Context<AdminEnv>) => `${projectPath(c.var.project, "webhooks")}/${c.req.param("webhookId")}`;
const hookOf = async (c: Context<AdminEnv>) => toWebhook(await requireWebhook(c.var.deps.db, c.var.project.id, c.req.param("webhookId")!));

subscriptionPages.get("/:webhookId", (c) => {
  const done = c.req.query("done");
  const queued = c.req.query("queued");
  const notice =
    done === "redelivered" && queued !== undefined && /^\d{1,6}$/.test(queued)
      ? `${Number(queued).toLocaleString("en")} event${queued === "1" ? "" : "s"} queued for redelivery.`
      : done !== undefined && Object.hasOwn(DONE, done)
        ? DONE[done]
        : undefined;
  // A secret just made for this subscription, once (docs/admin.md §2): a reload shows it no more.
  const once = takeShownOnce(c);
  const secret = once && once.about === c.req.param("webhookId") ? { label: once.label, value: once.value } : undefined;
  return subscriptionPage(c, c.req.param("webhookId"), { notice, secret });
});

/** The ping is sent at once (docs/webhooks.md §1.4), never inside a transaction; its outcome is this answer's page. */
subscriptionPages.post("/:webhookId/test", async (c) => {
  const { deps, project } = c.var;
  const ping = await sendTestPing(deps.db, deps.webhooks, project.id, c.req.param("webhookId"));
  return subscriptionPage(c, c.req.param("webhookId"), { ping });
});

/** Enable at once; Disable after a confirmation, as events recorded meanwhile are not queued for it. */
subscriptionPages.post("/:webhookId/status", async (c) => {
  const status = field(c, "status");
  if (status !== "active" && status !== "disabled") throw new ApiError("ERR_FORM_VALIDATION", "status must be one of active, disabled.", "status");
  const { deps, project } = c.var;
  const hook = await hookOf(c);
  if (status === "disabled" && hook.status === "active" && !confirmed(c)) return askToDisable(c, hook);
  await write(c, project.id, (trx) => patchWebhook(trx, project.id, hook.id, { status }, undefined, isoNow(deps.clock)));
  return c.redirect(`${here(c)}?done=${status === "active" ? "enabled" : "disabled"}`, 303);
});

/** Asks first; the new secret is then shown once on the subscription's page, never in a URL. */
subscriptionPages.post("/:webhookId/rotate-secret", async (c) => {
  const { deps, project } = c.var;
  const hook = await hookOf(c);
  if (!confirmed(c)) return askToRotate(c, hook);
  const rotated = await write(c, project.id, (trx) => rotateSecret(trx, deps.secrets, project.id, hook.id, deps.clock.now()));
  return showOnceAfterRedirect(c, { label: "New signing secret", value: rotated.secret, about: rotated.id }, `${here(c)}?done=rotated`);
});

/** Delete (the API's DELETE /v1/webhooks/{id}) after a confirmation; back to the list. */
subscriptionPages.post("/:webhookId/delete", async (c) => {
  const { project } = c.var;
  const hook = await hookOf(c);
  if (!confirmed(c)) return askToDelete(c, hook);
  await write(c, project.id, (trx) => deleteWebhook(trx, project.id, hook.id));
  return c.redirect(`${projectPath(project, "webhooks")}?done=deleted`, 303);
});

/**
 * URL, events and description (PATCH /v1/webhooks/{id}'s schema and service): a changed URL
 * is checked (DNS included) before the write transaction opens, as the API does (docs/api.md §13.3).
 */
subscriptionPages.post("/:webhookId/edit", async (c) => {
  const { deps, project } = c.var;
  const hook = await hookOf(c);
  const values = readHookForm(c);
  const refused = (error: unknown) => subscriptionPage(c, hook.id, { edit: { values, errors: formErrors(error) } }, 422);
  const body = {
    ...(values.url !== hook.url && { url: values.url }),
    events: values.events,
    description: values.description === "" ? null : values.description,
  };
  const parsed = PatchWebhookBody.safeParse(body);
  if (!parsed.success) return refused(validationFailure(parsed.error, { input: body }));
  const url = parsed.data.url;
  const checked: CheckedUrl | undefined = url === undefined ? undefined : { url, verdict: await checkUrl(url, deps.webhooks.env, deps.webhooks.resolve, false) };
  try {
    await write(c, project.id, (trx) => patchWebhook(trx, project.id, hook.id, { url, events: parsed.data.events, description: parsed.data.description }, checked, isoNow(deps.clock)));
  } catch (error) {
    return refused(error);
  }
  return c.redirect(`${here(c)}?done=edited`, 303);
});

/** Redeliver since a time (docs/webhooks.md §5): the API's body schema and service; a disabled subscription is a visible 409. */
subscriptionPages.post("/:webhookId/redeliver", async (c) => {
  const since = field(c, "since").trim();
  const id = c.req.param("webhookId");
  const refused = (error: unknown) => {
    if (error instanceof ApiError && error.status === 409) {
      // The service's message speaks of the API's PATCH; here the way out is the button above.
      const errors = formErrors(new ApiError("ERR_CONFLICT", "This subscription is disabled: enable it (the Enable button above) before redelivering."));
      return subscriptionPage(c, id, { redeliver: { since, errors } }, 409);
    }
    return subscriptionPage(c, id, { redeliver: { since, errors: formErrors(error) } }, 422);
  };
  const body = since === "" ? {} : { since: asUtc(since) };
  const parsed = RedeliverBody.safeParse(body);
  if (!parsed.success) {
    const error = since === "" ? new ApiError("ERR_FORM_VALIDATION", "Since is required.", "since") : validationFailure(parsed.error, { input: body });
    return refused(error);
  }
  const { deps, project } = c.var;
  try {
    const { queued } = await write(c, project.id, (trx) => redeliver(trx, project.id, id, { since: parsed.data.since! }, deps.clock.now(), inFlightOf(deps.webhooks)));
    return c.redirect(`${here(c)}?done=redelivered&queued=${queued}`, 303);
  } catch (error) {
    return refused(error);
  }
});

/**
 * The filter and ordering (docs/webhooks.md §8): the API's PATCH body schema and service, so the
 * console refuses what the API refuses (unknown tags, fields, categories), shown by the editor.
 */
subscriptionPages.post("/:webhookId/filter", async (c) => {
  const id = c.req.param("webhookId");
  const { values, body } = readFilterForm(c);
  const refused = (error: unknown) => subscriptionPage(c, id, { filter: { values, errors: formErrors(error) } }, 422);
  const parsed = PatchWebhookBody.safeParse(body);
  if (!parsed.success) return refused(validationFailure(parsed.error, { input: body }));
  const { deps, project } = c.var;
  try {
    await write(c, project.id, (trx) => patchWebhook(trx, project.id, id, { filter: parsed.data.filter, ordering: parsed.data.ordering }, undefined, isoNow(deps.clock)));
  } catch (error) {
    return refused(error);
  }
  return c.redirect(`${here(c)}?done=filtered`, 303);
});
