import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Events of a project (decisions §14). */
export const eventPages = new Hono<AdminEnv>();

eventPages.get("/", (c) =>
  c.html(
    <Layout title="Events" session={c.var.session} project={c.var.project} section="events">
      <h1>Events</h1>
    </Layout>,
  ),
);
