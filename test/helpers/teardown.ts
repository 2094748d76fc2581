/**
 * Preload for `bun test` (`bun test --preload ./test/helpers/teardown.ts`, or bunfig.toml's
 * `[test] preload`): after the last test file, stops this process's embedded PostgreSQL
 * cluster (test/helpers/postgres.ts) and removes its folder, so nothing is left once
 * `bun test` returns. Without it the cluster's reaper does the same just after the test
 * process ends. Nothing happens when no cluster was started (the SQLite runs).
 */
import { afterAll } from "bun:test";
import { stopPostgresCluster } from "./postgres.ts";

afterAll(() => stopPostgresCluster(), 30_000);
