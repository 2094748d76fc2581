import type { Context } from "hono";
import { Hono } from "hono";
import type { FormRow } from "../db/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { newId } from "../lib/ids.ts";
import { isoNow } from "../lib/time.ts";
import type { FieldSpec } from "./fields.ts";
import { formPage, messagePage, pageHeaders } from "./html.ts";
import { encodingOf, honeypotFilled, readSubmission, SubmissionInvalid, toContactInput, type Encoding, type RawSubmission } from "./input.ts";
import { SubmissionLimiter } from "./limiter.ts";
import { findForm } from "./repository.ts";
import type { SubmissionAnswer } from "./schemas.ts";
import { specsOf, submitForm } from "./service.ts";

/**
 * Web forms (decisions §10): `GET /f/{formId}` serves the page and `POST
 * /v1/forms/{formId}/submissions` takes it, both without a key, so createApp mounts these
 * ahead of the authenticated API. The answer follows the request: JSON gets JSON (the
 * error envelope on failure), a urlencoded browser post gets HTML or a 303.
 */
export function formRoutes(limiter = new SubmissionLimiter()): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/f/:formId", async (c) => {
    const db = c.var.deps.db;
    const form = await findForm(db, c.req.param("formId"));
    if (!form) return page(c, 404, messagePage("Form not found", "There is no form at this address."));
    return page(c, 200, formPage(form, await specsOf(db, form)), form.redirect_url);
  });

  app.post("/v1/forms/:formId/submissions", async (c) => {
    const deps = c.var.deps;
    const formId = c.req.param("formId");
    const encoding = encodingOf(c.req.header("content-type"));
    let form: FormRow | undefined;
    let specs: FieldSpec[] = [];
    let raw: RawSubmission | undefined;
    try {
      const decision = limiter.check(c.env?.ip ?? "unknown", formId);
      if (!decision.allowed) {
        throw new ApiError("ERR_RATE_LIMITED", "Too many submissions from this address; retry after the time in Retry-After.", undefined, {
          "Retry-After": String(decision.retryAfterSeconds),
        });
      }
      form = await findForm(deps.db, formId);
      if (!form) throw notFound("Form");
      if (!encoding) {
        throw new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json or application/x-www-form-urlencoded.");
      }
      raw = await readSubmission(c.req.raw, encoding);
      // A bot filled the hidden field: answer as a success, store nothing (decisions §12).
      if (honeypotFilled(raw)) return accepted(c, form, encoding, { submissionId: newId("sub"), submittedAt: isoNow() });
      specs = await specsOf(deps.db, form);
      const submitted = await submitForm(deps, form, specs, toContactInput(specs, raw, encoding));
      return accepted(c, form, encoding, submitted);
    } catch (error) {
      // JSON callers get the envelope from onError; browsers get a page.
      if (encoding !== "form" || !(error instanceof ApiError)) throw error;
      return refused(c, error, form, specs, raw);
    }
  });

  return app;
}

function page(c: Context<AppEnv>, status: 200 | 201 | 402 | 404 | 413 | 422 | 429, html: string, redirectUrl: string | null = null) {
  return c.html(html, status, pageHeaders(redirectUrl));
}

function accepted(c: Context<AppEnv>, form: FormRow, encoding: Encoding, answer: SubmissionAnswer) {
  if (encoding === "json") return c.json(answer, 201);
  if (form.redirect_url) return c.redirect(form.redirect_url, 303);
  return page(c, 201, messagePage("Thank you", `We received your submission to ${form.name}.`));
}

const TITLES: Record<number, [string, string]> = {
  402: ["Not accepted", "This form cannot take submissions right now. Please try again later."],
  404: ["Form not found", "There is no form at this address."],
  413: ["Too much data", "The submission is larger than this form accepts."],
};

/** A refused browser post: the form again with its errors (422), or a short page saying why. */
function refused(c: Context<AppEnv>, error: ApiError, form: FormRow | undefined, specs: FieldSpec[], raw: RawSubmission | undefined) {
  for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
  if (error instanceof SubmissionInvalid && form) {
    return page(c, 422, formPage(form, specs, { values: raw, errors: error.errors }), form.redirect_url);
  }
  if (error.status === 429) {
    const wait = error.headers?.["Retry-After"] ?? "60";
    return page(c, 429, messagePage("Too many submissions", `Please wait ${wait} seconds and send the form again.`));
  }
  const [title, message] = TITLES[error.status] ?? ["Not accepted", error.message];
  return page(c, error.status as 422, messagePage(title, message));
}
