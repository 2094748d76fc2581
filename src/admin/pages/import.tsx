import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Import of a project (decisions §14). */
export const importPages = new Hono<AdminEnv>();

importPages.get("/", (c) =>
  c.html(
    <Layout title="Import" session={c.var.session} project={c.var.project} section="import">
      <h1>Import</h1>
    </Layout>,
  ),
);
