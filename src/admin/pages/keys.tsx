import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** API keys of a project (decisions §14). */
export const keyPages = new Hono<AdminEnv>();

keyPages.get("/", (c) =>
  c.html(
    <Layout title="API keys" session={c.var.session} project={c.var.project} section="keys">
      <h1>API keys</h1>
    </Layout>,
  ),
);
