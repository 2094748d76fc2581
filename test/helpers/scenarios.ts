/**
 * Scenario tables (PocketBase's `tests.ApiScenario`): one row per rule, `{ name, method,
 * path, body, status, error / expect }`, each row one test named as the rule it checks,
 * run against the real service started in the test process (test/helpers/in-process.ts:
 * a real socket and a real SQLite file, or a PostgreSQL database under
 * CRM_TEST_BACKEND=postgres). For the many 4xx and validation cases: a row is a request and
 * what must come back, nothing else.
 *
 *   const svc = inProcessService();              // beforeAll: the service and a project
 *   scenarios("POST /contacts: validation", svc, [
 *     { name: "a first name that is not a string is 422 firstName", method: "POST", path: "/contacts",
 *       body: { firstName: 5 }, status: 422, error: { code: "ERR_FORM_VALIDATION", fieldName: "firstName" } },
 *   ]);
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "./expect.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "./in-process.ts";
import type { Api, ApiResponse, ProjectOptions, RequestOptions } from "./server.ts";

/** A value given as is, or computed when the row runs (ids made in a beforeAll). */
type Lazy<T> = T | (() => T);
const value = <T>(v: Lazy<T>): T => (typeof v === "function" ? (v as () => T)() : v);

export interface Scenario {
  /** The rule the row checks: the test's name. */
  name: string;
  method: string;
  /** Under /v1, or an absolute URL (`${origin}/...`). */
  path: Lazy<string>;
  /** The JSON request body. */
  body?: Lazy<unknown>;
  /** A body sent as is (no Content-Type unless in `headers`). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  query?: Lazy<RequestOptions["query"]>;
  /** `null`: no Authorization header; a string: that key; absent: the table's project key. */
  key?: Lazy<string | null>;
  status: number;
  /** The error envelope (docs/api.md §7): its code and, when given, fieldName and message exactly. */
  error?: { code: string; fieldName?: Lazy<string | RegExp>; message?: Lazy<string> };
  /** More checks of the answer. */
  expect?: (res: ApiResponse) => void | Promise<void>;
  /** Run only on one backend (rows about the SQLite file itself, say). */
  skip?: boolean;
}

/** What a table runs against: a request function (with the table's default key) and the origin. */
export interface ScenarioTarget {
  api: Api;
  origin: string;
}

/** Runs one row: the request, then status, the envelope and the row's own checks. */
export async function runScenario(target: ScenarioTarget, row: Scenario): Promise<ApiResponse> {
  const opts: RequestOptions = { headers: row.headers, rawBody: row.rawBody };
  if (row.body !== undefined) opts.body = value(row.body);
  if (row.query !== undefined) opts.query = value(row.query);
  if (row.key !== undefined) opts.key = value(row.key);
  const res = await target.api(row.method, value(row.path), opts);
  expectStatus(res, row.status);
  if (row.error) {
    expectError(res, row.error.code, row.error.fieldName === undefined ? undefined : value(row.error.fieldName));
    if (row.error.message !== undefined) expect(res.json.message).toBe(value(row.error.message));
  }
  await row.expect?.(res);
  return res;
}

/** One `describe(title)` with one test per row, each named `row.name`. */
export function scenarios(title: string, target: () => ScenarioTarget, rows: Scenario[]): void {
  describe(title, () => {
    for (const row of rows) test.skipIf(row.skip === true)(row.name, async () => void (await runScenario(target(), row)));
  });
}

export interface InProcessService extends ScenarioTarget {
  server: InProcessServer;
  project: InProcessProject;
}

/**
 * Starts the service in-process for the file (beforeAll) with one project whose limits do
 * not get in a table's way (a rate limit or create quota is a rule of its own, tested where
 * it is the subject); stops it afterAll. The getter is valid inside tests and hooks.
 */
export function inProcessService(opts: { env?: Record<string, string>; project?: ProjectOptions } = {}): () => InProcessService {
  let service: InProcessService | undefined;
  beforeAll(async () => {
    const server = await startInProcess({ env: opts.env });
    try {
      const project = await server.newProject({ rateLimitPerMinute: 100_000, contactCreatesPerHour: 100_000, ...opts.project });
      service = { server, project, api: project.api, origin: server.origin };
    } catch (error) {
      await server.stop();
      throw error;
    }
  }, 60_000);
  afterAll(async () => {
    await service?.server.stop();
  }, 60_000);
  return () => {
    if (!service) throw new Error("inProcessService(): the service is not started (used outside a test or hook?)");
    return service;
  };
}
