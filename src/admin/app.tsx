import { actingAs } from "../changes/actor.ts";
import { Hono, type Context, type MiddlewareHandler } from "hono";
import type { ApiError } from "../errors.ts";
import { findProject } from "../projects/service.ts";
import { findAsset } from "./assets.ts";
import type { AdminEnv } from "./env.ts";
import { authPages } from "./pages/auth.tsx";
import { duplicatePages } from "./pages/duplicates.tsx";
import { redirectMerged } from "./pages/merge-undo.tsx";
import { projectPages } from "./pages/projects.tsx";
import { adminHeaders, checkPost, loadSession, type Refusal } from "./security.ts";
import type { Session } from "./sessions.ts";
import { Layout } from "./ui.tsx";

const MessagePage = (p: { title: string; message: string; session?: Session }) => (
  <Layout title={p.title} session={p.session}>
    <div class="card narrow">
      <h1>{p.title}</h1>
      <p>{p.message}</p>
      <p>
        <a href={p.session ? "/admin/projects" : "/admin/sign-in"}>{p.session ? "Back to projects" : "Sign in"}</a>
      </p>
    </div>
  </Layout>
);

const message = (c: Context<AdminEnv>, status: 403 | 404 | 413 | 422 | 429 | 500, title: string, text: string) =>
  c.html(<MessagePage title={title} message={text} session={c.var.session} />, status);

function refuse(c: Context<AdminEnv>, why: Refusal) {
  c.var.deps.log.warn("admin form refused", { reason: why, requestId: c.var.requestId });
  const text =
    why === "origin"
      ? "This form was not sent from this site (its Origin header does not match), so nothing was done."
      : "This form has expired or was not made by this site, so nothing was done. Go back, reload the page and try again.";
  return message(c, 403, "Form refused", text);
}

/** Every page but sign-in and setup needs a session; without one, a page sends the browser to sign in, anything else is refused. */
function requireSession(): MiddlewareHandler<AdminEnv> {
  return async function requireSession(c, next) {
    // Every change made from the console names its admin (docs/api.md §19.1).
    if (c.var.session) return actingAs({ actor: { type: "admin", id: c.var.session.adminId }, requestId: c.var.requestId }, next);
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      const next = c.req.path === "/admin" || c.req.path === "/admin/" ? "" : `?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}`;
      return c.redirect(`/admin/sign-in${next}`, 303);
    }
    return message(c, 403, "Signed out", "Your session has ended, so nothing was done. Sign in and try again.");
  };
}

/** Loads the project of /admin/projects/:projectId/… for its pages; an unknown one is a 404 page. */
function loadProject(): MiddlewareHandler<AdminEnv> {
  return async function loadProject(c, next) {
    const project = await findProject(c.var.deps.db, c.req.param("projectId")!);
    if (!project) return message(c, 404, "No such project", "This project does not exist.");
    c.set("project", project);
    await next();
  };
}

/**
 * Anything thrown under `/admin` that a page did not handle (a body over its limit, a
 * contact that does not exist, the write queue full) is answered as a page, not JSON.
 * createApp mounts it ahead of the body limit (docs/security.md §2).
 */
export function adminErrorPages(): MiddlewareHandler<AdminEnv> {
  return async function adminErrorPages(c, next) {
    c.set("renderError", (error: ApiError) => {
      const status = error.status as 404;
      if (error.headers) for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
      if (error.status === 413) return message(c, 413, "Too large", "What was sent is too large.");
      return message(c, status, status === 404 ? "Not found" : "Not done", error.message);
    });
    await next();
  };
}

/**
 * `/admin`, the admin console (docs/admin.md §3): server-rendered pages over the same services
 * as the API and the CLI. createApp puts its host check, its error pages and the body
 * limit in front (docs/security.md §2, §5).
 */
export function adminApp(): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>();
  app.use("*", adminHeaders());

  app.get("/assets/:name", (c) => {
    const asset = findAsset(c.req.param("name"));
    if (!asset) return message(c, 404, "Not found", "No such file.");
    return c.body(asset.body, 200, { "Content-Type": asset.type, "Cache-Control": "public, max-age=31536000, immutable" });
  });

  app.use("*", loadSession());
  app.use("*", checkPost(refuse));
  app.route("/", authPages);

  app.use("*", requireSession());
  app.get("/", (c) => c.redirect("/admin/projects", 303));
  app.use("/projects/:projectId/*", loadProject());
  app.use("/projects/:projectId", loadProject());
  // A merged-away contact's pages lead to its survivor's (docs/api.md §20.3).
  app.use("/projects/:projectId/contacts/:contactId/*", redirectMerged());
  app.route("/projects/:projectId/duplicates", duplicatePages);
  app.route("/projects", projectPages);
  app.all("*", (c) => message(c, 404, "Not found", "There is no such page."));
  return app;
}
