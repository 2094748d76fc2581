/**
 * Screenshots of every page of the admin console (docs/admin.md §3), for a person to review:
 *
 *   bun scripts/admin-screenshots.ts [outDir]      (npm run admin:screenshots; default /tmp/admin-screens)
 *
 * Starts a server on a fresh SQLite database (sandbox, so webhooks may go to loopback
 * receivers), fills it with realistic data through the console (setup, projects, keys,
 * reference data, a contact and its note, forms, a CSV import) and the API (contacts,
 * timelines, webhook subscriptions and their attempts), then writes a full-page PNG of each
 * page and state (errors, secrets shown once) at desktop 1280×800 and phone 390×844
 * (isMobile) as NN-name-desktop.png / NN-name-phone.png. Finally it follows every console
 * link it saw and shoots any page not covered yet. For each shot it also notes, in
 * summary.json and on stdout, what a machine can see: sideways scrolling, controls without
 * a label, not exactly one h1, requests leaving the server, CSP violations, console errors.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, recordPage, type PageRecord } from "../test/helpers/browser.ts";
import { startReceiver, type Receiver } from "../test/helpers/receiver.ts";
import { startServer, type ServerHandle } from "../test/helpers/server.ts";
import { until } from "../test/helpers/until.ts";
import { bigCsv, seedApi, HUBSPOT_CSV, IMPORT_CSV, PASSWORD } from "./admin-screenshots-data.ts";

const outDir = process.argv[2] ?? "/tmp/admin-screens";
const WAIT = 15_000;

interface Viewer {
  size: "desktop" | "phone";
  context: BrowserContext;
  page: Page;
  record: PageRecord;
  /** How much of `record` earlier shots accounted for. */
  seen: { requests: number; csp: number; console: number; errors: number };
}
interface Shot {
  file: string;
  url: string;
  status: number | null;
  problems: string[];
}

const shots: Shot[] = [];
const failures: string[] = [];
const covered = new Set<string>();
const links = new Set<string>();
let counter = 0;
let server!: ServerHandle;
let browser!: Browser;
const receivers: Receiver[] = [];

/** A page's address as a pattern: ids and contact numbers as placeholders, query names only. */
function pattern(url: string): string {
  const u = new URL(url);
  const path = u.pathname
    .split("/")
    .map((s) => (/^[a-z]{2,4}_[A-Za-z0-9]{10,}$/.test(s) ? ":id" : /^CR-\d+$/.test(s) ? ":contact" : s))
    .join("/");
  const names = [...new Set([...u.searchParams.keys()].filter((k) => k !== "done" && k !== "v" && k !== "next"))].sort();
  return names.length ? `${path}?${names.join("&")}` : path;
}

/** What the page shows that a machine can judge. */
async function audit(v: Viewer): Promise<string[]> {
  const facts = await v.page.evaluate(() => {
    const el = document.scrollingElement!;
    const controls = Array.from(document.querySelectorAll("input, select, textarea, button")).filter((c) => (c as HTMLInputElement).type !== "hidden");
    const unnamed = controls
      .filter((c) => {
        const input = c as HTMLInputElement;
        if (c.getAttribute("aria-label") || c.getAttribute("aria-labelledby")) return false;
        if (c.tagName === "BUTTON") return (c.textContent ?? "").trim() === "";
        return !input.labels || input.labels.length === 0;
      })
      .map((c) => `${c.tagName.toLowerCase()}[name=${c.getAttribute("name")}]`);
    // The outermost elements sticking out of the window on the right (what makes a page scroll sideways).
    const out = (e: Element | null) => !!e && e.getBoundingClientRect().right > el.clientWidth + 1 && e.getBoundingClientRect().width > 0;
    const sticking = Array.from(document.querySelectorAll("body *"))
      .filter((e) => out(e) && !out(e.parentElement))
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).split(" ")[0]}` : ""} to ${Math.round(e.getBoundingClientRect().right)} px`);
    return { overflow: el.scrollWidth - el.clientWidth, h1: document.querySelectorAll("h1").length, unnamed, sticking };
  });
  const problems: string[] = [];
  if (facts.overflow > 1) problems.push(`scrolls sideways by ${facts.overflow} px (${facts.sticking.join(", ")})`);
  if (facts.h1 !== 1) problems.push(`${facts.h1} h1 elements`);
  if (facts.unnamed.length) problems.push(`controls without a name: ${facts.unnamed.join(", ")}`);
  const r = v.record;
  const origin = server.origin;
  const foreign = r.requests.slice(v.seen.requests).filter((u) => !u.startsWith("data:") && new URL(u).origin !== origin);
  if (foreign.length) problems.push(`requests leaving the server: ${foreign.join(", ")}`);
  for (const c of r.cspViolations.slice(v.seen.csp)) problems.push(`CSP: ${c}`);
  for (const c of r.consoleErrors.slice(v.seen.console)) if (!/status of (4\d\d)/.test(c)) problems.push(`console: ${c}`);
  for (const c of r.pageErrors.slice(v.seen.errors)) problems.push(`page error: ${c}`);
  v.seen = { requests: r.requests.length, csp: r.cspViolations.length, console: r.consoleErrors.length, errors: r.pageErrors.length };
  return problems;
}

/** Screenshots what `v` shows now as NN-name-size.png and remembers the links on it. */
async function shoot(v: Viewer, n: number, name: string, status: number | null) {
  await v.page.waitForLoadState("load");
  const file = `${String(n).padStart(2, "0")}-${name}-${v.size}.png`;
  const problems = await audit(v);
  await v.page.screenshot({ path: join(outDir, file), fullPage: true });
  shots.push({ file, url: v.page.url(), status, problems });
  covered.add(pattern(v.page.url()));
  for (const href of await v.page.locator("a[href]").evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href))) {
    if (href.startsWith(`${server.origin}/admin/`) && !href.includes("/assets/")) links.add(href.replace(/#.*$/, ""));
  }
  console.log(`${file}${problems.length ? `\n  ! ${problems.join("\n  ! ")}` : ""}`);
}

/** One page or state at both sizes: `act` brings each viewer there (a goto, or filling and sending a form). */
async function state(viewers: Viewer[], name: string, act: (page: Page) => Promise<unknown>) {
  const n = ++counter;
  for (const v of viewers) {
    try {
      const res = await act(v.page);
      const status = res && typeof res === "object" && "status" in res ? (res as { status(): number }).status() : null;
      await shoot(v, n, name, status);
    } catch (error) {
      failures.push(`${name} (${v.size}): ${String(error).split("\n")[0]}`);
      console.log(`!! ${name} (${v.size}) failed: ${String(error).split("\n")[0]}`);
    }
  }
}

const go = (path: string) => (page: Page) => page.goto(path.startsWith("http") ? path : server.origin + path);
const h1 = (page: Page) => page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: WAIT });
const click = async (page: Page, name: string, role: "button" | "link" = "button") => {
  await page.getByRole(role, { name, exact: true }).first().click();
  await h1(page);
};
/** Runs a seeding step; a failure is reported and the rest goes on. */
async function step(what: string, work: () => Promise<unknown>) {
  try {
    await work();
  } catch (error) {
    failures.push(`${what}: ${String(error).split("\n")[0]}`);
    console.log(`!! ${what} failed: ${String(error).split("\n")[0]}`);
  }
}

async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${server.origin}/admin/sign-in`);
  await page.getByLabel("Email", { exact: true }).fill(email);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await h1(page);
}

async function main() {
  mkdirSync(outDir, { recursive: true });
  [server, browser] = await Promise.all([
    startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,2s,2s,1h", CRM_OUTBOX_POLL_MS: "50" } }),
    launchBrowser(),
  ]);
  const viewers: Viewer[] = [];
  for (const [size, options] of [
    ["desktop", { viewport: { width: 1280, height: 800 } }],
    ["phone", { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true }],
  ] as const) {
    const context = await browser.newContext(options);
    const page = await context.newPage();
    viewers.push({ size, context, page, record: await recordPage(page, server.origin), seen: { requests: 0, csp: 0, console: 0, errors: 0 } });
  }
  const [desktop] = viewers as [Viewer, Viewer];
  const each = async (work: (page: Page) => Promise<unknown>) => {
    for (const v of viewers) await work(v.page);
  };

  // The first start's setup link, its page, the first admin created through it, the link used up.
  const email = "ops.lead@acme-sales.example";
  const setup = /\/admin\/setup\?token=\S+/.exec(server.stdout())?.[0];
  if (setup) {
    await state(viewers, "setup", async (page) => (await go(setup)(page), h1(page)));
    await step("first admin through the setup link", async () => {
      await desktop.page.getByLabel("Email", { exact: true }).fill(email);
      await desktop.page.getByLabel("Password", { exact: true }).fill(PASSWORD);
      await click(desktop.page, "Create admin");
      await desktop.page.getByRole("button", { name: "Sign out" }).click();
      await h1(desktop.page);
    });
    await state(viewers, "setup-link-used", go(setup));
  } else failures.push("no setup link on the server's first start");
  await state(viewers, "sign-in", go("/admin/projects"));
  await state(viewers, "sign-in-wrong-password", async (page) => {
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel("Password", { exact: true }).fill("not my password");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("alert").waitFor({ timeout: WAIT });
  });
  await each((page) => signIn(page, email, PASSWORD));

  // Projects: two made in the console (one with a long name), plus the server's default one.
  await step("projects", async () => {
    for (const name of ["Acme Sales", "Northwind Customer Success and Renewals (EMEA)"]) {
      await desktop.page.goto(`${server.origin}/admin/projects`);
      await desktop.page.getByLabel("Name", { exact: true }).fill(name);
      await click(desktop.page, "Create project");
    }
  });
  await state(viewers, "projects", go("/admin/projects"));
  await state(viewers, "projects-error", async (page) => {
    await page.getByLabel("Name", { exact: true }).fill("   ");
    await page.getByRole("button", { name: "Create project", exact: true }).click();
    await h1(page);
  });
  const projects = await server.cli(["project", "list", "--json"]);
  const project = (projects.data as Array<{ id: string; name: string }>).find((p) => p.name === "Acme Sales")!;
  const base = `/admin/projects/${project.id}`;
  await state(viewers, "project-settings", go(`${base}?done=created`));
  await state(viewers, "project-settings-error", async (page) => {
    await page.getByLabel("Requests per minute").fill("0");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await h1(page);
  });

  // API keys: the one the seeding uses, one that expires, one revoked; the shown-once state; a refused form.
  let key = "";
  await step("keys", async () => {
    const page = desktop.page;
    const create = async (name: string, scopes: string[], expires?: string) => {
      await page.goto(`${server.origin}${base}/keys`);
      await page.getByLabel("Name", { exact: true }).fill(name);
      for (const s of scopes) await page.getByLabel(s, { exact: true }).check();
      if (expires) await page.getByLabel("Expires (UTC)").fill(expires);
      await click(page, "Create key");
      return (await page.getByRole("textbox", { name: "New API key" }).inputValue()).trim();
    };
    key = await create("Website integration", ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"]);
    await create("Nightly export to the data warehouse", ["contacts:read"], `${new Date().getUTCFullYear() + 1}-01-31T12:00`);
    await create("Old importer", ["contacts:write"]);
    await page.getByRole("row", { name: /Old importer/ }).getByRole("button", { name: "Revoke" }).click();
    await h1(page);
  });
  await state(viewers, "keys", go(`${base}/keys?done=revoked`));
  await state(viewers, "keys-created", async (page) => {
    await page.getByLabel("Name", { exact: true }).fill(`Zapier (${page.viewportSize()!.width} px)`);
    await page.getByLabel("contacts:read", { exact: true }).check();
    await click(page, "Create key");
  });
  await state(viewers, "keys-error", async (page) => {
    await page.getByLabel("Name", { exact: true }).fill("No scopes chosen");
    await click(page, "Create key");
  });

  // Reference data through the console's forms.
  await step("reference data", async () => {
    const page = desktop.page;
    const add = async (form: string, fill: Record<string, string>, button: string) => {
      await page.goto(`${server.origin}${base}/reference`);
      const f = page.getByRole("form", { name: form });
      for (const [label, value] of Object.entries(fill)) {
        const field = f.getByLabel(label, { exact: true });
        if ((await field.evaluate((e) => e.tagName)) === "SELECT") await field.selectOption(value);
        else await field.fill(value);
      }
      await click(page, button);
    };
    await add("New contact type", { Name: "Partner", Category: "Other" }, "Create contact type");
    await add("New contact type", { Name: "Trial lead", Category: "Lead" }, "Create contact type");
    for (const name of ["Demo", "Support ticket", "Site visit"]) await add("New interaction type", { Name: name }, "Create interaction type");
    await add("New custom field", { Title: "Plan", Type: "select", Options: "gold, silver, bronze" }, "Create custom field");
    await add("New custom field", { Title: "Seats", Type: "number" }, "Create custom field");
    await add("New custom field", { Title: "Renewal date", Type: "date" }, "Create custom field");
    await add("New custom field", { Title: "Topics", Type: "multiselect", Options: "product news, events, webinars" }, "Create custom field");
    for (const name of ["vip", "newsletter", "churn-risk"]) await add("New tag", { Name: name }, "Create tag");
  });
  await state(viewers, "reference", go(`${base}/reference`));
  await state(viewers, "reference-error", async (page) => {
    const f = page.getByRole("form", { name: "New tag" });
    await f.getByLabel("Name", { exact: true }).fill("vip");
    await click(page, "Create tag");
  });

  // Contacts and timelines through the API, webhooks and their attempts (see admin-screenshots-data.ts).
  const seeded = await seedApi(server, key, async (replies) => {
    const r = await startReceiver();
    receivers.push(r);
    await r.script(replies.slice(0, -1), replies.at(-1));
    return r.url;
  }).catch((error) => {
    failures.push(`API seeding: ${String(error)}`);
    return null;
  });

  // A contact entered by hand, with a note, then edited.
  let adaPath = "";
  await step("a contact entered in the console", async () => {
    const page = desktop.page;
    await page.goto(`${server.origin}${base}/contacts/new`);
    const fill = { "First name": "Ada", "Last name": "Lovelace", Email: "ada.lovelace@analytical-engines.example", Phone: "+44 20 7946 0958", "Business name": "Analytical Engines Ltd" };
    for (const [label, value] of Object.entries(fill)) await page.getByLabel(label, { exact: true }).fill(value);
    await page.getByLabel("Tags", { exact: true }).fill("vip, newsletter");
    await page.getByLabel("City", { exact: true }).fill("London");
    await page.getByLabel("Plan", { exact: true }).selectOption("gold");
    await page.getByLabel("Seats", { exact: true }).fill("42");
    await click(page, "Save");
    adaPath = new URL(page.url()).pathname;
    await page.getByLabel("Note", { exact: true }).fill("Met at the London meetup.\nWants a quote for 42 seats before the end of the quarter.");
    await click(page, "Add note");
    // Then edited: the timeline shows the change with its fields from → to (docs/api.md §19).
    await page.goto(`${server.origin}${adaPath}/edit`);
    await page.getByLabel("Email", { exact: true }).fill("ada@analytical-engines.example");
    await page.getByLabel("Tags", { exact: true }).fill("vip, newsletter, churn-risk");
    await click(page, "Save");
  });
  await state(viewers, "contacts", go(`${base}/contacts`));
  await state(viewers, "contacts-search", go(`${base}/contacts?search=ada`));
  await state(viewers, "contacts-filter-error", go(`${base}/contacts?updatedSince=yesterday`));
  await state(viewers, "contacts-page-2", async (page) => (await go(`${base}/contacts?limit=10`)(page), click(page, "Next page", "link")));
  await state(viewers, "contact-new", go(`${base}/contacts/new`));
  await state(viewers, "contact-new-error", async (page) => {
    await page.getByLabel("Email", { exact: true }).fill("not-an-email");
    await click(page, "Save");
  });
  if (adaPath) {
    await state(viewers, "contact", go(`${adaPath}?done=noted`));
    await state(viewers, "contact-note-error", async (page) => click(page, "Add note"));
    await state(viewers, "contact-edit", go(`${adaPath}/edit`));
  }
  if (seeded) {
    await state(viewers, "contact-busy", go(`${base}/contacts/${seeded.busyContact}`));
    await state(viewers, "contact-long-values", go(`${base}/contacts/${seeded.longContact}`));
  }

  // Duplicates (docs/api.md §20): one person entered three times, compared, merged in the console, then its timeline and Undo.
  let trio: string[] = [];
  await step("three duplicates through the API", async () => {
    const create = async (body: Record<string, unknown>) => {
      const res = await server.api("POST", "/contacts", { key, body });
      if (res.status !== 201) throw new Error(`POST /contacts: ${res.status} ${res.text.slice(0, 200)}`);
      return res.json.contactId as string;
    };
    trio = [
      await create({
        firstName: "Margaret", lastName: "Hamilton", email: "margaret.hamilton@mit-instrumentation.example", phone: "+1 617 555 0100",
        businessName: "MIT Instrumentation Laboratory", tags: ["vip"], customFields: { Plan: "gold", Seats: 12 },
        address: { line1: "75 Cambridge Parkway", city: "Cambridge", state: "MA", zip: "02142", country: "US" },
      }),
      await create({
        firstName: "Margaret", lastName: "Hamilton-Heafield", email: "Margaret.Hamilton@mit-instrumentation.example", subscribed: true,
        notes: "Met at the Apollo guidance conference. Prefers calls in the morning (US Eastern), never on Fridays; the assistant handles scheduling.",
        tags: ["newsletter", "churn-risk"], customFields: { Plan: "silver" },
      }),
      await create({ firstName: "Margaret", lastName: "Hamilton", phone: "+1 (617) 555-0100", businessName: "Hamilton Technologies, Inc.", website: "https://hamilton-technologies.example" }),
    ];
    await server.api("POST", `/contacts/${trio[1]}/interactions`, { key, body: { type: "note", note: "Asked for the price list for 12 seats." } });
  });
  await state(viewers, "duplicates", go(`${base}/duplicates`));
  if (trio.length === 3) {
    const compare = `${base}/duplicates/compare?ids=${trio.join(",")}`;
    await state(viewers, "duplicates-compare", go(compare));
    await state(viewers, "merge-confirm", async (page) => {
      await go(compare)(page);
      await page.getByRole("group", { name: "Last name", exact: true }).getByRole("radio", { name: `Hamilton-Heafield from ${trio[1]}` }).check();
      await click(page, "Merge");
    });
    await step("a merge in the console", async () => {
      const page = desktop.page;
      await go(compare)(page);
      await click(page, "Merge");
      await click(page, "Confirm merge");
    });
    await state(viewers, "contact-merged", go(`${base}/contacts/${trio[0]}`));
    await state(viewers, "merge-undo", async (page) => {
      await go(`${base}/contacts/${trio[0]}`)(page);
      await click(page, "Undo merge", "link");
    });
  }

  // Forms through the console, and a form's public page.
  await step("forms", async () => {
    const page = desktop.page;
    const add = async (name: string, fields: string[], redirect?: string) => {
      await page.goto(`${server.origin}${base}/forms`);
      await page.getByLabel("Name", { exact: true }).fill(name);
      for (const f of fields) await page.getByLabel(f, { exact: true }).check();
      if (redirect) await page.getByLabel("Redirect URL").fill(redirect);
      await click(page, "Create form");
    };
    await add("Newsletter signup", ["firstName", "email", "Topics"]);
    await add("Request a quote", ["firstName", "lastName", "email", "phone", "businessName", "Plan", "Seats"], "https://www.acme-sales.example/thanks-for-your-request");
  });
  await state(viewers, "forms", go(`${base}/forms?done=created`));
  await state(viewers, "forms-error", async (page) => {
    await page.getByLabel("Name", { exact: true }).fill("No fields");
    await click(page, "Create form");
  });
  await state(viewers, "form-public-page", async (page) => {
    await go(`${base}/forms`)(page);
    await page.getByRole("link", { name: "Open" }).first().click();
    await page.waitForLoadState("load");
  });

  // Webhooks: the list, each subscription's page, its actions.
  await state(viewers, "webhooks", go(`${base}/webhooks`));
  if (seeded) {
    for (const [name, description] of Object.entries(seeded.webhooks)) {
      await state(viewers, `webhook-${name}`, async (page) => {
        await go(`${base}/webhooks`)(page);
        await click(page, description, "link");
      });
    }
    await state(viewers, "webhook-test-ping", async (page) => {
      await go(`${base}/webhooks`)(page);
      await click(page, seeded.webhooks.recovered, "link");
      await click(page, "Send test ping");
    });
    await state(viewers, "webhook-secret-rotated", async (page) => {
      await go(`${base}/webhooks`)(page);
      await click(page, seeded.webhooks.recovered, "link");
      await click(page, "Rotate secret");
    });
  }

  // Events: the log, a filter, a refused filter, a payload opened.
  await state(viewers, "events", go(`${base}/events`));
  await state(viewers, "events-payload-open", async (page) => {
    await go(`${base}/events?type=contact.created`)(page);
    await page.getByText("Payload", { exact: true }).first().click();
  });
  await state(viewers, "events-filter-error", go(`${base}/events?since=last+week`));

  // Import: a CSV with good and bad rows, its progress and summary; a refused upload.
  await state(viewers, "import", go(`${base}/import`));
  await step("import", async () => {
    const page = desktop.page;
    await page.goto(`${server.origin}${base}/import`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "trade-show-leads-2024.csv", mimeType: "text/csv", buffer: Buffer.from(IMPORT_CSV) });
    await click(page, "Upload");
    await click(page, "Start import");
    await until(async () => (await page.reload(), !(await page.locator("main").innerText()).includes("Importing…")), { timeoutMs: 30_000, intervalMs: 500, what: "the import to finish" });
  });
  // An export of another CRM: the matched columns are shown before the import runs (docs/import-export.md §2).
  await state(viewers, "import-preview", async (page) => {
    await page.goto(`${server.origin}${base}/import`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "hubspot-contacts.csv", mimeType: "text/csv", buffer: Buffer.from(HUBSPOT_CSV) });
    await click(page, "Upload");
  });
  await state(viewers, "import-preview-unmapped", async (page) => {
    await page.goto(`${server.origin}${base}/import`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "hubspot-contacts.csv", mimeType: "text/csv", buffer: Buffer.from(HUBSPOT_CSV) });
    await click(page, "Upload");
    await click(page, "Start import");
  });
  // A larger file: the page of an import still running, and a second upload refused meanwhile.
  let running = "";
  await step("a large import", async () => {
    const page = desktop.page;
    await page.goto(`${server.origin}${base}/import`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "crm-export-full.csv", mimeType: "text/csv", buffer: Buffer.from(bigCsv(20_000)) });
    await click(page, "Upload");
    await click(page, "Start import");
    running = page.url();
  });
  if (running) {
    await state(viewers, "import-running", go(running));
    await state(viewers, "import-busy", async (page) => {
      await page.goto(`${server.origin}${base}/import`);
      await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "one-more.csv", mimeType: "text/csv", buffer: Buffer.from(IMPORT_CSV) });
      await click(page, "Upload");
    });
  }
  await state(viewers, "import-list", go(`${base}/import`));
  await state(viewers, "import-summary", async (page) => {
    await go(`${base}/import`)(page);
    await click(page, "trade-show-leads-2024.csv", "link");
  });
  await state(viewers, "import-error", async (page) => {
    await page.goto(`${server.origin}${base}/import`);
    await page.getByLabel("CSV file", { exact: true }).setInputFiles({ name: "empty.csv", mimeType: "text/csv", buffer: Buffer.from("") });
    await click(page, "Upload");
  });

  // Export, and erasing a person (docs/import-export.md §2).
  await state(viewers, "export", go(`${base}/export`));
  if (adaPath) {
    await state(viewers, "contact-erase", go(`${adaPath}/erase`));
    await state(viewers, "contact-erase-error", async (page) => {
      await page.getByLabel(/^Type CR-\d+ to confirm$/).fill("CR-1");
      await click(page, "Erase");
    });
  }
  let erased = "";
  if (seeded) {
    await step("erase a contact", async () => {
      const page = desktop.page;
      await go(`${base}/contacts/${seeded!.longContact}/erase`)(page);
      await page.getByLabel(/^Type CR-\d+ to confirm$/).fill(seeded!.longContact);
      await click(page, "Erase");
      erased = page.url();
    });
  }
  if (erased) await state(viewers, "contacts-erased", go(erased));

  // Pages for things that went wrong.
  await state(viewers, "not-found", go("/admin/no-such-page"));
  await state(viewers, "no-such-project", go("/admin/projects/prj_doesnotexist0000000000/contacts"));
  await state(viewers, "no-such-contact", go(`${base}/contacts/CR-999999`));

  // Any console page seen as a link and not shot yet (ignoring pages of lists and sign-out).
  for (const link of links) {
    const p = pattern(link);
    // Downloads (the export's files) are not pages.
    if (covered.has(p) || /[?&]cursor=/.test(link) || /\/export\.(csv|jsonl)(\?|$)/.test(p)) continue;
    covered.add(p);
    await state(viewers, `more${p.replace(/[^A-Za-z0-9]+/g, "-")}`, go(link));
  }

  writeFileSync(join(outDir, "summary.json"), JSON.stringify({ shots, failures }, null, 2));
  const flagged = shots.filter((s) => s.problems.length);
  console.log(`\n${shots.length} screenshots in ${outDir}; ${flagged.length} with problems a machine can see; ${failures.length} steps failed.`);
  for (const f of failures) console.log(`  failed: ${f}`);
}

try {
  await main();
} finally {
  await browser?.close();
  for (const r of receivers) await r.stop();
  await server?.stop();
}
