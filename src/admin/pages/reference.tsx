import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Reference data of a project (decisions §14). */
export const referencePages = new Hono<AdminEnv>();

referencePages.get("/", (c) =>
  c.html(
    <Layout title="Reference data" session={c.var.session} project={c.var.project} section="reference">
      <h1>Reference data</h1>
    </Layout>,
  ),
);
