import { actingAs } from "../changes/actor.ts";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { FormRow } from "../storage/schema.ts";
import { ApiError, notFound } from "../errors.ts";
import { limitBodies } from "../http/body-limit.ts";
import { strictQuery } from "../http/strict-query.ts";
import { transactional } from "../http/transaction.ts";
import type { AppEnv } from "../http/env.ts";
import { isHttpUrl } from "../lib/formats.ts";
import { newId } from "../lib/ids.ts";
import { isoNow } from "../lib/time.ts";
import type { FieldSpec } from "./fields.ts";
import { formPage, messagePage, pageHeaders } from "./html.ts";
import { encodingOf, honeypotFilled, SubmissionInvalid, toContactInput, type Encoding, type RawSubmission } from "./input.ts";
import { SubmissionLimiter } from "./limiter.ts";
import { findForm } from "./repository.ts";
import { FormIdParam, submissionRoute, type SubmissionAnswer } from "./schemas.ts";
import { specsOf, submitForm } from "./service.ts";

/** What a submission has shown so far: its answer and its error page are made from it. */
interface Submission {
  encoding: Encoding | null;
  form?: FormRow;
  specs: FieldSpec[];
  raw?: RawSubmission;
}

type FormsEnv = AppEnv & { Variables: { submission: Submission } };

/**
 * `POST /v1/forms/{formId}/submissions` (docs/api.md §15), a typed sub-app like the other
 * domains. It takes no key, so createApi mounts it ahead of `authenticate`. The gate
 * (below) finds the form, applies the per-address limit and reads the body once; the
 * route's validators parse that text by its content type; the handler gets
 * `c.req.valid()`. The answer follows the request: JSON gets JSON, a urlencoded browser
 * post gets HTML or a 303, and its errors too, rendered through the one error handler of
 * createApp (`renderError`, set by `formErrorPages`, which createApp mounts first).
 */
export function formRoutes(limiter?: SubmissionLimiter): OpenAPIHono<FormsEnv> {
  const app = new OpenAPIHono<FormsEnv>();
  app.openapi({ ...submissionRoute, middleware: [limitBodies(), submissionGate(limiter), strictQuery(), submissionTransaction] }, async (c) => {
    const { deps, submission } = c.var;
    const form = submission.form!;
    const encoding = submission.encoding!;
    const raw = (submission.raw = encoding === "json" ? c.req.valid("json") : formValues(c.req.valid("form")));
    // A bot filled the hidden field: answer as a success, store nothing (docs/api.md §3).
    if (honeypotFilled(raw)) return accepted(c, form, encoding, { submissionId: newId("sub"), submittedAt: isoNow(deps.clock) });
    submission.specs = await specsOf(c.get("db"), form);
    const submitted = await submitForm(c.get("db"), form, submission.specs, toContactInput(submission.specs, raw, encoding), isoNow(deps.clock));
    return accepted(c, form, encoding, submitted);
  });
  return app;
}

/**
 * `GET /f/{formId}` (docs/api.md §15): the form as a plain HTML page, outside `/v1` and the
 * API's document. It may be embedded in other sites (docs/api.md §7): no frame-ancestors.
 */
export function formPages(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();
  const route = createRoute({
    method: "get",
    path: "/f/{formId}",
    hide: true,
    request: { params: FormIdParam },
    responses: {
      200: { description: "The form.", content: { "text/html": { schema: z.string() } } },
      404: { description: "No such form.", content: { "text/html": { schema: z.string() } } },
    },
  });
  app.openapi(route, async (c) => {
    const db = c.get("deps").db;
    const form = await findForm(db, c.req.valid("param").formId);
    if (!form) return page(c, 404, messagePage("Form not found", "There is no form at this address."));
    return page(c, 200, formPage(form, await specsOf(db, form)), redirectTarget(form.redirect_url));
  });
  return app;
}

/**
 * One transaction per submission, as every write of the API, with its Idempotency-Key
 * (docs/api.md §11): a submission has no API key, so its keys belong to its form.
 */
const inTransaction = transactional({
  transaction: true,
  writer: (c) => {
    const form = (c.var as FormsEnv["Variables"]).submission.form!;
    return { projectId: form.project_id, owner: `form:${form.id}` };
  },
}) as unknown as MiddlewareHandler<FormsEnv>;

/** The transaction, with the form as the actor of the changes it makes (docs/api.md §19.1). */
const submissionTransaction: MiddlewareHandler<FormsEnv> = (c, next) =>
  actingAs({ actor: { type: "form", id: c.var.submission.form!.id }, requestId: c.var.requestId }, () => inTransaction(c, next));

/**
 * Mounted by createApp ahead of the route (docs/security.md §2): from here on a browser
 * post gets its errors as pages, the body limit's 413 included.
 */
export function formErrorPages(): MiddlewareHandler<FormsEnv> {
  return async function formErrorPages(c, next) {
    const submission: Submission = { encoding: encodingOf(c.req.header("content-type")), specs: [] };
    c.set("submission", submission);
    if (submission.encoding === "form") c.set("renderError", (error) => refused(c, error, submission));
    await next();
  };
}

/**
 * Runs before the validators, in this order: an unknown form is 404 before any limiter
 * state is made for it (docs/api.md §7); then the per-address limit (10 a minute per form,
 * 60 in all; docs/api.md §6), the content type (415), and the body (its size already judged
 * by src/http/body-limit.ts), read once and left for the validators. The limiter, unless
 * given, is made at the first submission, on the service's clock (issue 11).
 */
function submissionGate(given?: SubmissionLimiter): MiddlewareHandler<FormsEnv> {
  let limiter = given;
  return async function submissionGate(c, next) {
    const submission = c.var.submission;
    const form = await findForm(c.get("deps").db, c.req.param("formId") ?? "");
    if (!form) throw notFound("Form");
    submission.form = form;
    const clock = c.get("deps").clock;
    limiter ??= new SubmissionLimiter(() => clock.now());
    const decision = limiter.check(c.get("clientAddress"), form.id);
    if (!decision.allowed) {
      throw new ApiError("ERR_RATE_LIMITED", "Too many submissions from this address; retry after the time in Retry-After.", undefined, {
        "Retry-After": String(decision.retryAfterSeconds),
      });
    }
    if (!submission.encoding) {
      throw new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json or application/x-www-form-urlencoded.");
    }
    // Kept in Hono's body cache: the validators read the same text, the Idempotency-Key fingerprint reads rawBody.
    c.set("rawBody", await c.req.text());
    await next();
  };
}

/** Urlencoded values as parsed by the validator (a string, or an array for a repeated key) → every value of each key. */
function formValues(form: Record<string, unknown>): RawSubmission {
  return Object.fromEntries(Object.entries(form).map(([key, value]) => [key, [value].flat().map(String)]));
}

/**
 * A form's redirect URL when it can be sent as a header (docs/security.md §6). A value
 * stored before the check existed, with a control character in it, is left out: the
 * browser gets the thank-you page instead of a 500.
 */
const redirectTarget = (url: string | null) => (url !== null && isHttpUrl(url) ? url : null);

/** Any page, with the headers every form page carries. */
function page(c: Context, status: number, html: string, redirectUrl: string | null = null) {
  return c.html(html, status as ContentfulStatusCode, pageHeaders(redirectUrl));
}

function accepted(c: Context<FormsEnv>, form: FormRow, encoding: Encoding, answer: SubmissionAnswer) {
  if (encoding === "json") return c.json(answer, 201);
  const redirect = redirectTarget(form.redirect_url);
  if (redirect) return c.redirect(redirect, 303);
  return page(c, 201, messagePage("Thank you", `We received your submission to ${form.name}.`));
}

const TITLES: Record<number, [string, string]> = {
  402: ["Not accepted", "This form cannot take submissions right now. Please try again later."],
  404: ["Form not found", "There is no form at this address."],
  413: ["Too much data", "The submission is larger than this form accepts."],
  500: ["Something went wrong", "Your submission could not be taken. Please try again later."],
};

/** A refused browser post: the form again with its errors (422), or a short page saying why. */
function refused(c: Context<FormsEnv>, error: ApiError, submission: Submission): Response {
  const { form, specs, raw } = submission;
  for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
  if (error instanceof SubmissionInvalid && form) {
    return page(c, 422, formPage(form, specs, { values: raw, errors: error.errors }), redirectTarget(form.redirect_url));
  }
  if (error.status === 429) {
    const wait = error.headers?.["Retry-After"] ?? "60";
    return page(c, 429, messagePage("Too many submissions", `Please wait ${wait} seconds and send the form again.`));
  }
  const [title, message] = TITLES[error.status] ?? ["Not accepted", error.message];
  return page(c, error.status, messagePage(title, message));
}
