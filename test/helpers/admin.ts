/**
 * The admin console over plain HTTP (docs/admin.md §2), as a browser would speak it: a cookie
 * jar, the Origin header on every POST, and the CSRF token taken from the last page seen.
 * Accounts come from the CLI (`crm admin create`, password on stdin).
 */
import { BUN, REPO_ROOT, runCommand } from "./spawn.ts";

export const ADMIN_PASSWORD = "correct horse battery staple";
let counter = 0;

/** Creates an admin account with the CLI on the server's database; returns its email and id. */
export async function createAdminAccount(env: Record<string, string>, opts: { email?: string; password?: string } = {}) {
  const email = opts.email ?? `admin${process.pid}-${++counter}@example.com`;
  const r = await runCommand([BUN, "src/main.ts", "admin", "create", "--email", email, "--json"], {
    cwd: REPO_ROOT,
    env,
    stdin: `${opts.password ?? ADMIN_PASSWORD}\n`,
  });
  return { email, id: JSON.parse(r.stdout.trim()).id as string, password: opts.password ?? ADMIN_PASSWORD };
}

export interface AdminPage {
  status: number;
  headers: Headers;
  text: string;
  /** Where a redirect points (Location), if any. */
  location: string | null;
}

/** A browser-like client of /admin: cookies kept, redirects not followed (tests look at them), CSRF and Origin added to POSTs. */
export class AdminClient {
  readonly cookies = new Map<string, string>();
  /** The `_csrf` value of the last page that had a form. */
  csrf = "";

  constructor(readonly origin: string) {}

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string> } = {}): Promise<AdminPage> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.Cookie = this.cookieHeader();
    const res = await fetch(this.origin + path, { method, headers, body: init.body, redirect: "manual" });
    this.remember(res);
    const text = await res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(text);
    if (csrf) this.csrf = csrf[1]!;
    return { status: res.status, headers: res.headers, text, location: res.headers.get("location") };
  }

  get(path: string) {
    return this.request("GET", path);
  }

  /** POSTs form fields (urlencoded) with this page's CSRF token and the server's Origin, unless `headers` or the fields override them. */
  post(path: string, fields: Record<string, string | string[]> = {}, headers: Record<string, string> = {}) {
    const body = new URLSearchParams();
    if (!("_csrf" in fields)) body.append("_csrf", this.csrf);
    for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) body.append(k, item);
    return this.request("POST", path, {
      body,
      headers: { Origin: this.origin, "Content-Type": "application/x-www-form-urlencoded", ...headers },
    });
  }

  /** Opens the sign-in page (for its CSRF cookie and token), signs in, and checks it worked. */
  async signIn(email: string, password = ADMIN_PASSWORD): Promise<AdminPage> {
    await this.get("/admin/sign-in");
    const res = await this.post("/admin/sign-in", { email, password });
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}: ${res.text.slice(0, 300)}`);
    await this.get(res.location!);
    return res;
  }
}

/** A signed-in client with a fresh admin account. */
export async function signedInAdmin(origin: string, env: Record<string, string>) {
  const account = await createAdminAccount(env);
  const client = new AdminClient(origin);
  await client.signIn(account.email, account.password);
  return { client, account };
}

/** Text of HTML without its tags, entities decoded, whitespace collapsed. */
export const pageText = (html: string) =>
  html.replace(/<[^>]+>/g, " ").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&").replace(/\s+/g, " ").trim();

/** The cells' text of each body row of the table in the region named `label` (TableWrap). */
export function tableRows(html: string, label: string): string[][] {
  const start = html.indexOf(`aria-label="${label}"`);
  if (start < 0) return [];
  const body = html.slice(html.indexOf("<tbody>", start), html.indexOf("</tbody>", start));
  return body
    .split("<tr>")
    .slice(1)
    .map((row) => row.split(/<td[^>]*>/).slice(1).map((cell) => pageText(cell)));
}
