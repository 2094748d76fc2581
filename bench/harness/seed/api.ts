/**
 * Builds the bench data set through the HTTP API of a running server, as users build theirs
 * (issue 10): POST /v1/contacts for each person, a share through the interface's upsert
 * path (GET /v1/contacts?email=…, then PATCH or POST; docs/api.md §11), and PATCHes of
 * earlier contacts so list order is not creation order. Several projects are filled at
 * once, interleaved. Nobody runs ANALYZE: the server keeps its own statistics
 * (src/storage/sqlite/statistics.ts), so the figures are what users get.
 *
 * Names follow a skewed (Zipf-like) frequency over the lists of ./people.ts, so 3-letter
 * prefixes of common names (mar, jam, smi…) match many thousands of contacts.
 * Deterministic: the same counts give the same requests in the same order per project.
 */
import { CITIES, FIRST, STREETS, TAGS, TYPE_SHARE, drawPerson, prng } from "./people.ts";

export interface ApiSeedProject {
  id: string;
  key: string;
  count: number;
  /** bench, tenant-b, tenant-c (createTenants). */
  name?: string;
}

const TENANT_NAMES = ["bench", "tenant-b", "tenant-c"] as const;
const TENANT_LIMITS = ["--rate-limit-per-minute", "1000000000", "--contact-creates-per-hour", "1000000000"];
const TENANT_SCOPES = ["--scopes", "contacts:read,contacts:write,interactions:write"];

/**
 * The benches' three tenants, made by the admin CLI (`cli` runs `crm ARGS --json`): the
 * measured one with `contacts`, two more with a tenth and a hundredth, limits out of the way.
 */
export function createTenants(cli: (args: string[]) => any, contacts: number): ApiSeedProject[] {
  const counts = [contacts, Math.round(contacts / 10), Math.round(contacts / 100)];
  return TENANT_NAMES.map((name, i) => {
    const p = cli(["project", "create", "--name", name, ...TENANT_LIMITS]);
    const k = cli(["key", "create", "--project", p.id, ...TENANT_SCOPES]);
    return { id: p.id as string, key: k.key as string, count: counts[i]!, name };
  });
}

/**
 * The three tenants of a database built by an earlier run that kept no tenants.json: found by
 * name with `crm project list`, a new key made for each (as createTenants does), `count` the
 * project's contacts now.
 */
export function findTenants(cli: (args: string[]) => any): ApiSeedProject[] {
  const { data } = cli(["project", "list"]) as { data: Array<{ id: string; name: string; contactCount: number }> };
  return TENANT_NAMES.map((name) => {
    const p = data.find((x) => x.name === name);
    if (!p) throw new Error(`no project named ${name} in the database (projects: ${data.map((x) => x.name).join(", ") || "none"})`);
    const k = cli(["key", "create", "--project", p.id, ...TENANT_SCOPES]);
    return { id: p.id, key: k.key as string, count: Number(p.contactCount), name };
  });
}

export interface ApiSeedResult {
  contacts: number;
  requests: number;
  upserts: number;
  patches: number;
  seconds: number;
  /** Contacts created per second. */
  rate: number;
}

export interface ApiSeedOptions {
  /** Requests in flight at once (keep-alive connections). */
  connections?: number;
  /** Share of creates made through the upsert path (GET ?email= first). */
  upsertShare?: number;
  /** Share of creates followed by a PATCH of an earlier contact of the project. */
  patchShare?: number;
  log?: (line: string) => void;
}

type Body = Record<string, unknown>;

/** One project's people, deterministic per project index. */
function people(index: number, typeIds: Map<string, string>) {
  const r = prng(20240601 + index * 7919);
  // The lists run from common to rare: squaring a uniform draw favours the front.
  const common = <T>(list: T[]): T => list[Math.floor(list.length * r.next() ** 2)]!;
  const typeShare = TYPE_SHARE.map(([category, share]) => [typeIds.get(category)!, share] as const);
  const recentEmails: string[] = [];
  return (n: number): { body: Body; email: string | null } => {
    const { first, last, business, email, phone } = drawPerson(r, n, recentEmails, common);
    let typeRoll = r.next();
    const body: Body = {
      firstName: first,
      lastName: last,
      ...(business ? { businessName: business } : {}),
      email,
      phone,
      contactTypeId: typeShare.find(([, share]) => (typeRoll -= share) < 0)?.[0] ?? typeShare[0]![0],
      tags: TAGS.filter(([, share]) => r.next() < share).map(([name]) => name),
      subscribed: r.next() < 0.4,
    };
    if (!first && !last && !business && !email && !phone) body.firstName = common(FIRST);
    if (r.next() < 0.6) {
      const [city, state, zip] = r.pick(CITIES);
      body.address = { line1: `${r.int(1, 9999)} ${r.pick(STREETS)} St`, city, state, zip, country: "US" };
    }
    if (r.next() < 0.2) body.source = "web-form";
    return { body, email };
  };
}

async function contactTypeIds(url: string, key: string): Promise<Map<string, string>> {
  const res = await fetch(`${url}/v1/contact-types?limit=200`, { headers: { authorization: `Bearer ${key}` } });
  if (!res.ok) throw new Error(`GET /v1/contact-types answered ${res.status}: ${await res.text()}`);
  const { data } = (await res.json()) as { data: Array<{ id: string; category: string }> };
  return new Map(data.map((t) => [t.category, t.id]));
}

/**
 * Fills every project through `url`, interleaved in proportion to their counts, with
 * `connections` requests in flight. Throws after the first refused request (a bench on a
 * partly built data set measures nothing).
 */
export async function seedThroughApi(url: string, projects: ApiSeedProject[], options: ApiSeedOptions = {}): Promise<ApiSeedResult> {
  const { connections = 32, upsertShare = 0.05, patchShare = 0.03, log = () => {} } = options;
  const started = performance.now();
  const state = await Promise.all(
    projects.map(async (p, i) => ({ ...p, next: people(i, await contactTypeIds(url, p.key)), made: 0, created: 0, r: prng(i + 1) })),
  );
  const total = projects.reduce((a, p) => a + p.count, 0);
  let requests = 0, upserts = 0, patches = 0, done = 0;

  const call = async (project: (typeof state)[number], method: string, path: string, body?: Body) => {
    requests++;
    const res = await fetch(`${url}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${project.key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text) as { data?: Array<{ contactId: string }>; contactId?: string };
  };

  /** The project whose next contact is furthest behind its share: an even interleave. */
  const nextProject = () => {
    let best: (typeof state)[number] | null = null;
    for (const p of state) if (p.made < p.count && (!best || p.made / p.count < best.made / best.count)) best = p;
    return best;
  };

  const worker = async () => {
    for (let project = nextProject(); project; project = nextProject()) {
      const n = ++project.made;
      const { body, email } = project.next(n);
      if (email && project.r.next() < upsertShare) {
        upserts++;
        const found = await call(project, "GET", `/contacts?email=${encodeURIComponent(email)}&limit=1`);
        const existing = found.data?.[0];
        if (existing) await call(project, "PATCH", `/contacts/${existing.contactId}`, { tags: body.tags, phone: body.phone });
        else (await call(project, "POST", "/contacts", body), project.created++);
      } else {
        await call(project, "POST", "/contacts", body);
        project.created++;
      }
      if (project.created > 1 && project.r.next() < patchShare) {
        patches++;
        const target = 1 + Math.floor(project.r.next() * project.created);
        // A contact may have been relabelled or not exist yet under that number in a race: 404 is fine here.
        await call(project, "PATCH", `/contacts/CR-${target}`, { notes: `Called back on visit ${n}.` }).catch((e: Error) => {
          if (!String(e.message).includes("answered 404")) throw e;
        });
      }
      done++;
    }
  };

  const timer = setInterval(() => {
    const s = (performance.now() - started) / 1000;
    log(`  ${done.toLocaleString("en")} / ${total.toLocaleString("en")} contacts through the API, ${(done / s).toFixed(0)}/s`);
  }, 15_000);
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - started) / 1000;
  const contacts = state.reduce((a, p) => a + p.created, 0);
  return { contacts, requests, upserts, patches, seconds, rate: contacts / seconds };
}
