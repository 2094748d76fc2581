/**
 * What the console's browser tests and screenshots measure on a page (docs/admin.md §3): kinds
 * of page (an address with its ids replaced), which links a crawl follows, sideways scrolling
 * (the page's and any element's inside it) and how many rows the project's navigation takes.
 */
import type { Page } from "playwright-core";

/** A page's kind: its path with ids and contact numbers replaced, and its query's names (no values; notices left out). */
export function consolePattern(url: string): string {
  const u = new URL(url);
  const path = u.pathname
    .split("/")
    .map((s) => (/^[a-z]{2,5}_[A-Za-z0-9]{8,}$/.test(s) ? ":id" : /^CR-\d+$/i.test(s) ? ":contact" : /^\d+$/.test(s) ? ":n" : s))
    .join("/");
  const names = [...new Set([...u.searchParams.keys()].filter((k) => k !== "done"))].sort();
  return names.length ? `${path}?${names.join("&")}` : path;
}

/** A console page a crawl may open: same origin, under /admin, not signing out, not an asset or a file to download. */
export function isCrawlable(url: string, origin: string): boolean {
  const u = new URL(url);
  if (u.origin !== origin || !u.pathname.startsWith("/admin/") && u.pathname !== "/admin") return false;
  if (/^\/admin\/(sign-out|assets\/)/.test(u.pathname)) return false;
  return !/\.(csv|jsonl|json|txt|png|js|css)$/i.test(u.pathname) && !/(^|[?&])format=/.test(u.search) && !/\/download(\/|$)/.test(u.pathname);
}

/** Signs `page` in on the console's sign-in form and waits for the page it lands on. */
export async function signInPage(page: Page, origin: string, account: { email: string; password: string }) {
  await page.goto(`${origin}/admin/sign-in`);
  await page.getByLabel("Email", { exact: true }).fill(account.email);
  await page.getByLabel("Password", { exact: true }).fill(account.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor({ timeout: 15_000 });
}

/**
 * Why the page scrolls sideways, if it does (empty: it does not). Counted: the document
 * wider than the window; any element that scrolls sideways itself (overflow-x auto or
 * scroll, content wider than its box by more than a pixel); any element hiding what sticks
 * out (overflow-x hidden or clip with wider content: cut, not scrollable, as bad; an
 * ellipsis is meant). Form controls are left out (a long value scrolls inside a text field
 * by design).
 */
export async function sidewaysScroll(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const name = (e: Element) => {
      const cls = typeof e.className === "string" && e.className.trim() ? `.${e.className.trim().split(/\s+/).join(".")}` : "";
      const label = e.getAttribute("aria-label");
      const text = (e.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 40);
      return `${e.tagName.toLowerCase()}${cls}${label ? `[${label}]` : ""}${text ? ` "${text}"` : ""}`;
    };
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth) {
      const out2 = (e: Element | null) => !!e && e.getBoundingClientRect().right > window.innerWidth + 1 && e.getBoundingClientRect().width > 0;
      const sticking = Array.from(document.querySelectorAll("body *"))
        .filter((e) => out2(e) && !out2(e.parentElement))
        .slice(0, 4)
        .map((e) => `${name(e)} to ${Math.round(e.getBoundingClientRect().right)} px`);
      out.push(`the page is ${root.scrollWidth - window.innerWidth} px wider than the window (${sticking.join(", ")})`);
    }
    for (const e of [root, document.body]) {
      const style = getComputedStyle(e);
      if ((style.overflowX === "hidden" || style.overflowX === "clip") && e.scrollWidth > e.clientWidth + 1) out.push(`${e.tagName.toLowerCase()} hides ${e.scrollWidth - e.clientWidth} px sticking out on the right`);
    }
    // Cut, not scrollable: an element hiding what sticks out (an ellipsis by design and visually-hidden text aside).
    const cutting = Array.from(document.querySelectorAll("body *")).filter((e) => {
      if (/^(INPUT|TEXTAREA|SELECT)$/.test(e.tagName)) return false;
      const style = getComputedStyle(e);
      if (!(style.overflowX === "hidden" || style.overflowX === "clip") || style.textOverflow === "ellipsis" || e.clientWidth <= 1) return false;
      return e.scrollWidth > e.clientWidth + 1 && e.getBoundingClientRect().width > 0;
    });
    for (const e of cutting.slice(0, 4)) out.push(`${name(e)} cuts off what sticks out (${e.scrollWidth} px in ${e.clientWidth} px)`);
    const scrolling = Array.from(document.querySelectorAll("body *")).filter((e) => {
      if (/^(INPUT|TEXTAREA|SELECT)$/.test(e.tagName)) return false;
      const x = getComputedStyle(e).overflowX;
      return (x === "auto" || x === "scroll") && e.scrollWidth > e.clientWidth + 1;
    });
    for (const e of scrolling.slice(0, 4)) out.push(`${name(e)} scrolls sideways (${e.scrollWidth} px in ${e.clientWidth} px)`);
    if (scrolling.length > 4) out.push(`and ${scrolling.length - 4} more elements scroll sideways`);
    return out;
  });
}

/** Opens every disclosure of the page's main part (payloads, per-day figures, forms folded away), so what they hide is measured too. */
export const openDisclosures = (page: Page) => page.evaluate(() => document.querySelectorAll("main details").forEach((d) => ((d as HTMLDetailsElement).open = true)));

/** Rows the project's navigation takes: distinct top offsets of its visible links and menu (0: no project navigation). */
export async function navRows(page: Page): Promise<number> {
  return page.evaluate(() => {
    const nav = document.querySelector("nav.project") ?? Array.from(document.querySelectorAll("nav")).find((n) => /^Project /.test(n.getAttribute("aria-label") ?? ""));
    if (!nav) return 0;
    // checkVisibility: a closed <details>' links keep boxes in Chromium but are not shown.
    const tops = Array.from(nav.querySelectorAll("a, summary"))
      .filter((e) => e.checkVisibility({ visibilityProperty: true, opacityProperty: true }))
      .map((e) => e.getBoundingClientRect())
      .filter((r) => r.width > 0 && r.height > 0)
      .map((r) => r.top)
      .sort((a, b) => a - b);
    let rows = 0;
    let last = -Infinity;
    for (const t of tops) if (t - last > 4) (rows++, (last = t));
    return rows;
  });
}

/**
 * Crawls the console breadth first from `start` (absolute URLs): `visit` opens a page and
 * answers the links on it; each kind of page ({@link consolePattern}) is visited at most
 * `perKind` times, `max` pages in all. A link whose answer is not HTML (a download) is not
 * visited. Answers the kinds seen, with the URLs visited of each.
 */
export async function crawlConsole(opts: {
  origin: string;
  start: string[];
  /** Asks for a URL with the browser's cookies (a context's `request.get`). */
  probe: (url: string) => Promise<{ headers(): Record<string, string> }>;
  visit: (url: string, kind: string, nth: number) => Promise<string[]>;
  max?: number;
  perKind?: number;
}): Promise<Map<string, string[]>> {
  const queue = [...opts.start];
  const queued = new Set(queue);
  const kinds = new Map<string, string[]>();
  let visited = 0;
  while (queue.length && visited < (opts.max ?? 80)) {
    const url = queue.shift()!;
    const kind = consolePattern(url);
    const seen = kinds.get(kind) ?? [];
    if (seen.length >= (opts.perKind ?? 2)) continue;
    const answer = await opts.probe(url);
    if (!(answer.headers()["content-type"] ?? "").startsWith("text/html")) continue;
    seen.push(url);
    kinds.set(kind, seen);
    visited++;
    for (const href of await opts.visit(url, kind, seen.length)) {
      const clean = href.replace(/#.*$/, "");
      if (!isCrawlable(clean, opts.origin) || queued.has(clean)) continue;
      queued.add(clean);
      queue.push(clean);
    }
  }
  return kinds;
}

/**
 * The links of the page `page` shows, and where its GET forms lead as sent untouched (a "New
 * contact" button is one); a form the browser would not send untouched (a required field
 * left empty) is not followed.
 */
export const linksOf = (page: Page) =>
  page.evaluate(() => [
    ...Array.from(document.querySelectorAll("a[href]")).map((a) => (a as HTMLAnchorElement).href),
    ...Array.from(document.querySelectorAll("form"))
      .filter((f) => (f.getAttribute("method") ?? "get").toLowerCase() === "get")
      .filter((f) => (f as HTMLFormElement).checkValidity())
      .map((f) => {
        const url = new URL((f as HTMLFormElement).action);
        new FormData(f as HTMLFormElement).forEach((v, k) => typeof v === "string" && url.searchParams.append(k, v));
        return url.href;
      }),
  ]);
