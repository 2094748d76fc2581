import type { Clock } from "../lib/clock.ts";
import { checkUrl, type Resolver } from "./address-policy.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { postPinned, type SendResult } from "./sender.ts";
import { signatureHeaders, signingSecrets, type SealedSecrets } from "./signature.ts";

/** What sending needs besides the database. */
export interface WebhookEnv {
  secrets: SecretBox;
  env: "production" | "sandbox";
  resolve: Resolver;
  timeoutMs: number;
  /** The service's clock: the signatures' `t` and the rotated secret's 24 h are read from it (docs/webhooks.md §3.4). */
  clock: Clock;
}

/** One attempt to make: a delivery of the outbox, or the test ping. */
export interface AttemptTarget extends SealedSecrets {
  url: string;
  /** X-Service-Delivery / webhook-id. */
  deliveryId: string;
  /** X-Service-Event. */
  type: string;
  /** The exact bytes to send (serialised once, when the event fired). */
  body: string;
}

const failure = (error: string): SendResult => ({ statusCode: null, durationMs: 0, error, snippet: null, retryAfterMs: null });

/**
 * One delivery attempt, the same for the dispatcher and the test ping (docs/webhooks.md §1.4):
 * check the URL again (and pin the connection to the checked address), sign with the
 * attempt's own `t`, send. It never throws: a URL that no longer passes, or a secret that
 * no longer decrypts (CRM_SECRET_KEY changed), is a failed attempt with its reason, which
 * the dispatcher records on the retry schedule like any other (docs/webhooks.md §4.4).
 */
export async function attemptDelivery(target: AttemptTarget, w: WebhookEnv): Promise<SendResult> {
  const verdict = await checkUrl(target.url, w.env, w.resolve, true);
  if (!verdict.ok) return failure(verdict.reason);
  const now = w.clock.now();
  let secrets: string[];
  try {
    secrets = signingSecrets(target, w.secrets, now);
  } catch {
    return failure("the signing secret cannot be decrypted with this server's key (was CRM_SECRET_KEY changed?)");
  }
  const headers = {
    "X-Service-Event": target.type,
    ...signatureHeaders(secrets, target.deliveryId, Math.floor(now / 1000), target.body),
  };
  try {
    return await postPinned(verdict.url, verdict.addresses[0]!, headers, target.body, w.timeoutMs, w.clock);
  } catch (error) {
    return failure(`could not send: ${(error as Error)?.message ?? String(error)}`);
  }
}
