import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Webhooks of a project (decisions §14). */
export const webhookPages = new Hono<AdminEnv>();

webhookPages.get("/", (c) =>
  c.html(
    <Layout title="Webhooks" session={c.var.session} project={c.var.project} section="webhooks">
      <h1>Webhooks</h1>
    </Layout>,
  ),
);
