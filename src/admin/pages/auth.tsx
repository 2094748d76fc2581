import { Hono, type Context } from "hono";
import { deleteCookie } from "hono/cookie";
import { AccountError, checkCredentials, countAdmins, createAdmin } from "../accounts.ts";
import type { AdminEnv } from "../env.ts";
import { countTry, giveBack } from "../lockout.ts";
import { field, preSessionToken, PRE_SESSION_COOKIE, SESSION_COOKIE, setAdminCookie } from "../security.ts";
import { endSession, startSession } from "../sessions.ts";
import { consumeSetupToken, setupTokenValid } from "../setup-link.ts";
import { hasControlCharacters } from "../../lib/formats.ts";
import { ErrorSummary, Field, Layout, noErrors, PostForm, type FormErrors } from "../ui.tsx";

/** Sign-in, sign-out and the one-time setup link (docs/admin.md §1); the only pages without a session. */
export const authPages = new Hono<AdminEnv>();

/** Where a sign-in may send the browser: a console path, never another site, never a control character in the Location (docs/security.md §6). */
const safeNext = (next: string | undefined) =>
  next && /^\/admin(\/[^\\]*)?$/.test(next) && !next.startsWith("//") && !hasControlCharacters(next) ? next : "/admin/projects";

/**
 * Before the first admin exists, the sign-in page says how to make one (docs/admin.md §1):
 * the one-time setup link the server prints at start, or the CLI. Once one exists it says
 * nothing of the kind: whether accounts exist is not told to a stranger.
 */
const SetupHint = () => (
  <div class="setup-hint" role="note" aria-labelledby="setup-hint-h">
    <h2 id="setup-hint-h">No admin account yet</h2>
    <p>
      Open the one-time setup link the server printed when it started (it works for 24 hours; once it has expired, a restart prints a new one), or
      create an account on the server with <code>crm admin create --email you@example.com</code> (the password on standard input).
    </p>
  </div>
);

const SignInPage = (p: { csrf: string; email?: string; next?: string; errors?: FormErrors; noAdmin?: boolean }) => (
  <Layout title="Sign in">
    <div class="card narrow">
      <h1>Sign in</h1>
      {p.noAdmin ? <SetupHint /> : null}
      <ErrorSummary errors={p.errors} ids={{ email: "f-email", password: "f-password" }} />
      <PostForm action={`/admin/sign-in${p.next ? `?next=${encodeURIComponent(p.next)}` : ""}`} token={p.csrf}>
        <Field label="Email" name="email" type="email" value={p.email} autocomplete="username" required error={p.errors?.fields.email} />
        <Field label="Password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </PostForm>
    </div>
  </Layout>
);

async function signInPage(c: Context<AdminEnv>, status: 200 | 401 | 422 | 429 = 200, props: { email?: string; errors?: FormErrors } = {}) {
  const next = c.req.query("next");
  const noAdmin = (await countAdmins(c.var.deps.db)) === 0;
  return c.html(<SignInPage csrf={preSessionToken(c)} next={next ? safeNext(next) : undefined} noAdmin={noAdmin} {...props} />, status);
}

async function signIn(c: Context<AdminEnv>, adminId: string) {
  const { writes, clock } = c.var.deps;
  const token = await writes.run(null, (trx) => startSession(trx, adminId, clock.now()));
  setAdminCookie(c, SESSION_COOKIE, token);
  deleteCookie(c, PRE_SESSION_COOKIE, { path: "/admin" });
}

authPages.get("/sign-in", (c) => (c.var.session ? c.redirect(safeNext(c.req.query("next")), 303) : signInPage(c)));

/** The longest email an account can have (docs/api.md §11, docs/security.md §4): a longer one is refused before it is counted or stored. */
const MAX_EMAIL_LENGTH = 254;

/**
 * Sign-in (docs/admin.md §2, docs/security.md §4): the try is counted against the email
 * and the address before the password is checked, so a burst gets at most the window's
 * tries left checked and the rest are 429 unchecked; a success gives its try back.
 */
authPages.post("/sign-in", async (c) => {
  const { db, clock } = c.var.deps;
  const email = field(c, "email").trim();
  const password = field(c, "password");
  const errors = noErrors();
  if (email.length > MAX_EMAIL_LENGTH) {
    // Neither counted nor stored, and not echoed back: the field comes back empty.
    errors.fields.email = `Email must be at most ${MAX_EMAIL_LENGTH} characters.`;
    return signInPage(c, 422, { errors });
  }
  const tried = await countTry(c.var.deps.writes, email, c.var.clientAddress, clock.now());
  if (!tried.counted) {
    const minutes = Math.ceil(tried.retryAfterSeconds / 60);
    c.header("Retry-After", String(tried.retryAfterSeconds));
    errors.general.push(`Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`);
    return signInPage(c, 429, { email, errors });
  }
  const admin = email && password ? await checkCredentials(db, email, password) : null;
  if (!admin) {
    errors.general.push("The email or the password is wrong.");
    return signInPage(c, 401, { email, errors });
  }
  await giveBack(c.var.deps.writes, tried);
  await signIn(c, admin.id);
  c.var.deps.log.info("admin signed in", { adminId: admin.id, requestId: c.var.requestId });
  return c.redirect(safeNext(c.req.query("next")), 303);
});

authPages.post("/sign-out", async (c) => {
  const session = c.var.session;
  if (session) await c.var.deps.writes.run(null, (trx) => endSession(trx, session.id));
  deleteCookie(c, SESSION_COOKIE, { path: "/admin" });
  return c.redirect("/admin/sign-in", 303);
});

const SetupPage = (p: { csrf: string; token: string; email?: string; errors?: FormErrors }) => (
  <Layout title="Create the first admin">
    <div class="card narrow">
      <h1>Create the first admin</h1>
      <p>
        This link works once. The account you create here signs in to this console; more can be added with <code>crm admin create</code>.
      </p>
      <ErrorSummary errors={p.errors} ids={{ email: "f-email", password: "f-password" }} />
      <PostForm action={`/admin/setup?token=${encodeURIComponent(p.token)}`} token={p.csrf}>
        <Field label="Email" name="email" type="email" value={p.email} autocomplete="username" required error={p.errors?.fields.email} />
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="new-password"
          required
          hint="At least 12 characters."
          error={p.errors?.fields.password}
        />
        <button type="submit">Create admin</button>
      </PostForm>
    </div>
  </Layout>
);

const SetupGone = () => (
  <Layout title="Setup link not valid">
    <div class="card narrow">
      <h1>This setup link is not valid</h1>
      <p>
        It was used already, it is older than 24 hours, or an admin exists. Sign in, or create an admin with <code>crm admin create --email E</code>.
      </p>
      <p>
        <a href="/admin/sign-in">Sign in</a>
      </p>
    </div>
  </Layout>
);

authPages.get("/setup", async (c) => {
  const token = c.req.query("token") ?? "";
  if (!(await setupTokenValid(c.var.deps.db, token, c.var.deps.clock.now()))) return c.html(<SetupGone />, 404);
  return c.html(<SetupPage csrf={preSessionToken(c)} token={token} />);
});

authPages.post("/setup", async (c) => {
  const { writes, clock } = c.var.deps;
  const token = c.req.query("token") ?? "";
  const email = field(c, "email");
  const now = clock.now();
  try {
    const admin = await writes.run(null, async (trx) => {
      if (!(await setupTokenValid(trx, token, now)) || !(await consumeSetupToken(trx, token, now))) return null;
      return createAdmin(trx, email, field(c, "password"), new Date(now).toISOString());
    });
    if (!admin) return c.html(<SetupGone />, 404);
    await signIn(c, admin.id);
    c.var.deps.log.info("first admin created", { adminId: admin.id, requestId: c.var.requestId });
    return c.redirect("/admin/projects", 303);
  } catch (error) {
    if (!(error instanceof AccountError)) throw error;
    const errors = noErrors();
    errors.fields[error.field] = error.message;
    return c.html(<SetupPage csrf={preSessionToken(c)} token={token} email={email} errors={errors} />, 422);
  }
});
