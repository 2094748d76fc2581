import { Hono } from "hono";
import type { AdminEnv } from "../env.ts";
import { Layout } from "../ui.tsx";

/** Contacts of a project (decisions §14). */
export const contactPages = new Hono<AdminEnv>();

contactPages.get("/", (c) =>
  c.html(
    <Layout title="Contacts" session={c.var.session} project={c.var.project} section="contacts">
      <h1>Contacts</h1>
    </Layout>,
  ),
);
