import { sql, type Kysely } from "kysely";
import { newId } from "../../lib/ids.ts";
import type { ClaimBook, Claims, DueDelivery } from "../port.ts";
import type { Database, Db } from "../schema.ts";
import { advisoryLockUntilCommit } from "./dialect.ts";

/** How long a node's claim on a delivery lasts (docs/scaling.md §6: at most 30 s). */
export const LEASE_MS = 30_000;

/**
 * Claims of several nodes on one PostgreSQL database (src/storage/port.ts, `Claims`;
 * docs/scaling.md §6): the rows are leased to this node first. One lease statement at a time
 * per node: the claim may take back a row this node holds the lease of unless it is in the
 * book, so the book must already hold every row an earlier claim of this node leased. Two
 * claims of one node at once (the tick and a slot going on with its next delivery) would
 * otherwise both take the row the first one leased: the second's book was read before the
 * first returned, and the row it finds is leased to this very node, so the same delivery
 * would be sent twice.
 */
export function leasedClaims(db: Kysely<Database>): Claims {
  /** This process, as a lease owner. */
  const owner = newId("node");
  /** The lease claim running now (one at a time). */
  let leasing: Promise<void> = Promise.resolve();
  return {
    claim(book: ClaimBook, { webhookId, now, n, perSubscription }): Promise<DueDelivery[]> {
      const claim = leasing.then(async () => {
        const mine = book.ids();
        const leaseUntil = new Date(Date.parse(now) + LEASE_MS).toISOString();
        const rows = await leaseDueDeliveries(db, { webhookId, now, n, owner, leaseUntil, mine, perSubscription });
        for (const d of rows) book.add(d);
        return rows;
      });
      leasing = claim.then(
        () => undefined,
        () => undefined,
      );
      return claim;
    },
    async leased(on: Db, ids: string[], now: string): Promise<string[]> {
      if (ids.length === 0) return [];
      const rows = await on.selectFrom("deliveries").select("id").where("id", "in", ids).where("status", "=", "pending").where("lease_until", ">", now).execute();
      return rows.map((r) => r.id);
    },
  };
}

/**
 * The lease statement: up to `n` due deliveries of one subscription, oldest due first,
 * leased to `owner` until `leaseUntil`. `FOR UPDATE SKIP LOCKED` lets two nodes claim at
 * once without waiting on or taking each other's rows, and the lease keeps a row claimed
 * after this statement commits, while it is being sent. A claim that ends with its attempt
 * recorded clears the lease (`Dialect.leaseEnd`); a node that dies leaves it, and the row
 * is due again for everyone when the lease ends. Rows this node already holds (`mine`) are
 * skipped; a row whose lease it holds but no longer sends (a held claim released) it may
 * take again. At most `perSubscription` deliveries of the subscription are leased at once
 * across all nodes (this node's included; an attempt is leased until its outcome is
 * recorded). The result has what sending needs, for active subscriptions only.
 *
 * Ordering "per-contact" (docs/webhooks.md §8.2): a delivery about a contact is picked only
 * when no earlier one (position, then id) of that contact to the subscription is pending,
 * and no other of that contact's is leased by any node or held by this one (a redelivered
 * older event may come before one being sent). Under the advisory lock the leases other
 * nodes took have committed, so the check holds across nodes; each probe is one seek in
 * deliveries_contact_order (db/postgres/0006).
 */
async function leaseDueDeliveries(
  db: Kysely<Database>,
  claim: { webhookId: string; now: string; n: number; owner: string; leaseUntil: string; mine: string[]; perSubscription: number },
): Promise<DueDelivery[]> {
  return db.transaction().execute(async (trx) => {
    // One claim per subscription at a time across nodes, so the count of live leases below
    // is exact: docs/webhooks.md §2's 4 in flight per subscription hold for all nodes together.
    await advisoryLockUntilCommit(trx, `lease\n${claim.webhookId}`);
    const { rows } = await sql<DueDelivery>`
      WITH live AS (
        SELECT count(*) AS n FROM deliveries
        WHERE webhook_id = ${claim.webhookId} AND status = 'pending' AND lease_until > ${claim.now}
      ), picked AS (
        SELECT d.id FROM deliveries d
        WHERE d.webhook_id = ${claim.webhookId}
          AND d.status = 'pending'
          AND d.next_attempt_at <= ${claim.now}
          AND (d.lease_until IS NULL OR d.lease_until <= ${claim.now} OR d.lease_owner = ${claim.owner})
          AND NOT (d.id = ANY(${claim.mine}::text[]))
          AND (
            d.contact_id IS NULL
            OR (SELECT w.ordering FROM webhooks w WHERE w.id = ${claim.webhookId}) <> 'per-contact'
            OR (
              NOT EXISTS (
                SELECT 1 FROM deliveries e
                WHERE e.webhook_id = d.webhook_id AND e.contact_id = d.contact_id AND e.status = 'pending'
                  AND (e.position < d.position OR (e.position = d.position AND e.id < d.id))
              )
              AND NOT EXISTS (
                SELECT 1 FROM deliveries f
                WHERE f.webhook_id = d.webhook_id AND f.contact_id = d.contact_id AND f.status = 'pending' AND f.id <> d.id
                  AND (f.lease_until > ${claim.now} OR f.id = ANY(${claim.mine}::text[]))
              )
            )
          )
        ORDER BY d.next_attempt_at, d.id
        LIMIT GREATEST(0, LEAST(${claim.n}::int, ${claim.perSubscription}::int - (SELECT n FROM live)::int))
        FOR UPDATE OF d SKIP LOCKED
      ), leased AS (
        UPDATE deliveries SET lease_until = ${claim.leaseUntil}, lease_owner = ${claim.owner}
        FROM picked WHERE deliveries.id = picked.id
        RETURNING deliveries.id, deliveries.event_id, deliveries.webhook_id, deliveries.attempts, deliveries.created_at, deliveries.next_attempt_at, deliveries.contact_id
      )
      SELECT l.id, l.event_id, l.webhook_id, w.project_id, l.attempts, l.created_at,
             e.type, e.body, w.url, w.secret, w.previous_secret, w.previous_secret_until,
             l.contact_id, w.ordering
      FROM leased l
      JOIN webhooks w ON w.id = l.webhook_id
      JOIN events e ON e.id = l.event_id
      WHERE w.status = 'active'
      ORDER BY l.next_attempt_at, l.id`.execute(trx);
    return rows;
  });
}
