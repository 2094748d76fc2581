/**
 * A fetch for the typed client's tests (test/client/*.test.ts) that records what the
 * client really sends on the wire, each try of a retried call separately, and what came back.
 */
import type { FetchLike } from "@crm-service/client";

export interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
  /** Date.now() when the try was sent. */
  at: number;
  /** The status answered (undefined when the try threw). */
  status?: number;
  retryAfter?: string | null;
}

export function recordingFetch(inner: FetchLike = (request) => fetch(request)) {
  const sent: SentRequest[] = [];
  const send: FetchLike = async (request) => {
    const entry: SentRequest = {
      method: request.method,
      url: new URL(request.url),
      headers: new Headers(request.headers),
      body: await request.clone().text(),
      at: Date.now(),
    };
    sent.push(entry);
    const response = await inner(request);
    entry.status = response.status;
    entry.retryAfter = response.headers.get("retry-after");
    return response;
  };
  return { fetch: send, sent };
}
