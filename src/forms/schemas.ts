import { createRoute, z } from "@hono/zod-openapi";
import { ErrorSchema } from "../errors.ts";
import { timestampSchema } from "../lib/time.ts";

export const FormIdParam = z.object({
  formId: z.string().openapi({ param: { name: "formId", in: "path" }, example: "frm_4GJm2sWq8YtR1nXcB7dLp0" }),
});

export const SubmissionBody = z.record(z.string(), z.unknown(), { error: "must be an object of field values." }).openapi("FormSubmission", {
  description:
    "The form's field names (contact fields such as `email` or `address.city`, custom-field ids) → values. " +
    "Blank values count as not sent. `_hp` is the honeypot: leave it out or empty.",
  example: { email: "ada@example.com", firstName: "Ada", "address.city": "London", _hp: "" },
});

export const SubmissionAccepted = z
  .object({
    submissionId: z.string().openapi({ example: "sub_9aQ2mZx81LkT0bVcR5yHsW" }),
    submittedAt: timestampSchema,
  })
  .openapi("FormSubmissionAccepted");

/**
 * An error of a submission (docs/api.md §15.2): the envelope to a JSON request, a page to a
 * urlencoded (browser) post, which gets every answer as HTML.
 */
const errorAnswer = (description: string) => ({
  description: `${description} JSON requests get the envelope; urlencoded posts, an HTML page.`,
  content: { "application/json": { schema: ErrorSchema }, "text/html": { schema: z.string() } },
});

/**
 * POST /v1/forms/{formId}/submissions (docs/api.md §15): the route of the forms sub-app
 * (src/forms/routes.ts), which validates the body by its content type and puts it in the
 * API's document. It takes no key: `security: []`.
 */
export const submissionRoute = createRoute({
  method: "post",
  path: "/forms/{formId}/submissions",
  operationId: "submitWebForm",
  summary: "Submit a web form",
  description:
    "No API key. Takes JSON or `application/x-www-form-urlencoded`. Creates a contact (source `web_form`) or " +
    "updates the project's contact with the same email, then records `web_form.submitted`. JSON requests get " +
    "JSON answers; urlencoded (browser) posts get HTML pages, or a 303 to the form's redirect URL. " +
    "Limited per client address: 10 a minute per form, 60 a minute in all (an unknown form is a 404 and counts for nothing).",
  tags: ["Web forms"],
  security: [],
  request: {
    params: FormIdParam,
    body: {
      required: true,
      content: {
        "application/json": { schema: SubmissionBody },
        "application/x-www-form-urlencoded": { schema: SubmissionBody },
      },
    },
  },
  responses: {
    201: {
      description: "Accepted (a honeypot hit is answered the same way and stores nothing).",
      content: { "application/json": { schema: SubmissionAccepted }, "text/html": { schema: z.string() } },
    },
    303: { description: "Browser post to a form with a redirect URL: see that URL.", headers: z.object({ Location: z.string() }) },
    402: errorAnswer("Contact quota exhausted."),
    404: errorAnswer("No such form."),
    409: errorAnswer("A submission with this Idempotency-Key is still being processed (with Retry-After)."),
    413: errorAnswer("Body over 1 MiB."),
    415: { description: "Body is neither JSON nor urlencoded.", content: { "application/json": { schema: ErrorSchema } } },
    422: errorAnswer("Validation failed; fieldName names the form's field. A browser post gets the form again, with its errors."),
    429: errorAnswer("Too many submissions from this address; see Retry-After."),
    500: errorAnswer("Unexpected server error; retry with backoff."),
  },
});

export type SubmissionAnswer = z.infer<typeof SubmissionAccepted>;
