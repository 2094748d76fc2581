import { AsyncLocalStorage } from "node:async_hooks";

/** Who made a change (docs/api.md §19.1): an API key, a console admin, an import, a form, or the service itself. */
export interface Actor {
  type: "api_key" | "admin" | "import" | "form" | "system";
  id: string | null;
}

/** Who is acting and for which request: what every change record of the work carries. */
export interface Acting {
  actor: Actor;
  requestId: string | null;
}

const SYSTEM: Acting = { actor: { type: "system", id: null }, requestId: null };
const acting = new AsyncLocalStorage<Acting>();

/** Runs `work` on behalf of `who`: the changes it records name them (the API's authentication, the console, imports, forms, jobs). */
export function actingAs<T>(who: Acting, work: () => T): T {
  return acting.run(who, work);
}

/** Who is acting now; the service itself when nobody said (the CLI, the jobs). */
export const currentActing = (): Acting => acting.getStore() ?? SYSTEM;
