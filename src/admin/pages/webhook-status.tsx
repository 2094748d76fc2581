import type { Webhook } from "../../webhooks/schemas.ts";
import { Time } from "../ui.tsx";
import type { LastFailure } from "./webhook-health.ts";

/** A subscription's name and status as the console's webhook pages show them (docs/admin.md §3). */

/** A subscription is named by its description, or by its URL when it has none. */
export const titleOf = (hook: Pick<Webhook, "description" | "url">) => hook.description || hook.url;

/** Its status in words (never colour alone): Disabled, Failing (active, the last attempts failed) or Active. */
export const StatusBadge = ({ hook }: { hook: Pick<Webhook, "status" | "consecutiveFailures"> }) =>
  hook.status !== "active" ? (
    <span class="badge off">Disabled</span>
  ) : hook.consecutiveFailures > 0 ? (
    <span class="badge bad">Failing</span>
  ) : (
    <span class="badge ok">Active</span>
  );

/**
 * The last failure, and whether it is the subscription's state now: only while failures
 * follow each other (a success or an Enable resets the count), so "HTTP 500" never stands
 * as current beside a newer success; an older one is told as such, with its time.
 */
export const LastFailureText = ({ hook, failure }: { hook: Webhook; failure: LastFailure | undefined }) => {
  const reason = failure?.reason ?? hook.lastFailureReason;
  if (!reason) return <span class="none">—</span>;
  if (hook.consecutiveFailures > 0) {
    return (
      <span class="failure">
        <span class="prewrap">{reason}</span> {failure ? <Time at={failure.at} /> : null}
      </span>
    );
  }
  return (
    <span class="none earlier">
      None since {hook.lastSuccessAt && (!failure || failure.at < hook.lastSuccessAt) ? "the last success" : "it was enabled again"}. Earlier: <span class="prewrap">{reason}</span>
      {failure ? (
        <>
          {" "}
          <Time at={failure.at} />
        </>
      ) : null}
    </span>
  );
};

