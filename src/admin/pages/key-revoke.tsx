import type { Context } from "hono";
import type { ApiKeyInfo } from "../../auth/keys.ts";
import { SCOPES } from "../../auth/scopes.ts";
import { askToConfirm } from "../confirm.tsx";
import type { AdminEnv } from "../env.ts";
import { projectPath, Time } from "../ui.tsx";

/**
 * Revoke asks first (docs/admin.md §2): the confirmation page says what stops working, and
 * says so louder for the key the server made at its first start (docs/cli.md §3.1), which
 * has every scope and is often the one an integration was set up with.
 */

/** The key `crm` made at first start: named "bootstrap", with every scope (src/bootstrap.ts). */
export const isBootstrapKey = (k: Pick<ApiKeyInfo, "name" | "scopes">) => k.name === "bootstrap" && SCOPES.every((s) => k.scopes.includes(s));

/** A key's name as pages say it: its name, or its hint when it has none. */
export const keyName = (k: Pick<ApiKeyInfo, "name" | "hint">) => k.name ?? k.hint;

export function askToRevoke(c: Context<AdminEnv>, k: ApiKeyInfo) {
  const allScopes = SCOPES.every((s) => k.scopes.includes(s));
  return askToConfirm(c, {
    title: `Revoke the key "${keyName(k)}"?`,
    section: "keys",
    back: projectPath(c.var.project, "keys"),
    button: "Revoke key",
    consequence: (
      <>
        {isBootstrapKey(k) ? (
          <p class="warning">
            <strong>This is the key the server created at its first start, with every scope.</strong> Whatever was set up with it
            (scripts, integrations, the CLI's examples) stops working.
          </p>
        ) : allScopes ? (
          <p class="warning">
            <strong>This key has every scope.</strong>
          </p>
        ) : null}
        <p>
          The key <span class="mono">{k.hint}</span> ({k.scopes.join(", ")}) is refused from the moment you confirm: at once on
          this server, within 2 seconds on the others. A revoked key cannot be restored; make a new one instead.
        </p>
        <p>
          Last used: <Time at={k.lastUsedAt} />
        </p>
      </>
    ),
  });
}
