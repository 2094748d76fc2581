import type { Context } from "hono";
import type { Webhook } from "../../webhooks/schemas.ts";
import { askToConfirm } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { projectPath } from "../ui.tsx";
import { titleOf } from "./webhook-status.tsx";

/**
 * The confirmation pages of a subscription's actions (docs/admin.md §2): Delete (nothing more is
 * delivered, waiting deliveries dropped), Rotate secret (receivers need the new one within
 * 24 hours) and Disable (events recorded meanwhile are not queued for it).
 */

const back = (c: Context<AdminEnv>, hook: Webhook) => `${projectPath(c.var.project, "webhooks")}/${hook.id}`;

export const askToDelete = (c: Context<AdminEnv>, hook: Webhook) =>
  askToConfirm(c, {
    title: `Delete the subscription "${titleOf(hook)}"?`,
    section: "webhooks",
    back: back(c, hook),
    button: "Delete subscription",
    consequence: (
      <p>
        Nothing more is delivered to <span class="mono prewrap">{hook.url}</span>; its waiting deliveries and its attempts are dropped. This
        cannot be undone: a new subscription gets a new id and a new secret.
      </p>
    ),
  });

export const askToRotate = (c: Context<AdminEnv>, hook: Webhook) =>
  askToConfirm(c, {
    title: `Rotate the secret of "${titleOf(hook)}"?`,
    section: "webhooks",
    back: back(c, hook),
    button: "Rotate secret",
    consequence: (
      <p>
        A new signing secret is made and shown once. For 24 hours deliveries carry two signatures, the new secret's first and the old
        one's second; after that only the new one. Give the receiver the new secret within those 24 hours.
      </p>
    ),
  });

export const askToDisable = (c: Context<AdminEnv>, hook: Webhook) =>
  askToConfirm(c, {
    title: `Disable the subscription "${titleOf(hook)}"?`,
    section: "webhooks",
    back: back(c, hook),
    button: "Disable subscription",
    carry: { status: "disabled" },
    consequence: (
      <p>
        Events recorded while it is disabled are not queued for it, and its waiting deliveries are held. Enable it again at any time; then
        "Redeliver" sends the events it missed (of the last 30 days).
      </p>
    ),
  });
