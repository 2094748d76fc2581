import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Forms of a project (decisions §14). */
export const formPages = new Hono<AdminEnv>();

formPages.get("/", (c) =>
  c.html(
    <Layout title="Forms" session={c.var.session} project={c.var.project} section="forms">
      <h1>Forms</h1>
    </Layout>,
  ),
);
