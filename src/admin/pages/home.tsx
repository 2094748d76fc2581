import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** A project's home page (docs/admin.md §3): totals, 30-day charts, webhook health, latest changes. */
export const homePages = new Hono<AdminEnv>();

homePages.get("/", (c) =>
  c.html(
    <Layout title="Home" session={c.var.session} project={c.var.project} section="home">
      <h1>{c.var.project.name}</h1>
    </Layout>,
  ),
);
