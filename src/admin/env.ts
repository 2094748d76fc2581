import type { AppEnv } from "../http/env.ts";
import type { Session } from "./sessions.ts";

/** A project as the console's pages see it (src/projects/service.ts). */
export type Project = NonNullable<Awaited<ReturnType<typeof import("../projects/service.ts").findProject>>>;

/** The console's context: the API's, plus the signed-in admin and, under /admin/projects/:projectId, the project. */
export interface AdminEnv {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & {
    session: Session;
    /** The request's form fields, parsed once by the CSRF check (POST only). */
    form: Record<string, string | File | (string | File)[]>;
    project: Project;
  };
}
