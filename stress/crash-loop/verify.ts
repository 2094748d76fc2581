/**
 * The checks of the crash loop: after each restart, every write an earlier process
 * acknowledged is there (a patch: its value or a later one sent); at the end, every
 * acknowledged write fired its event, every event GET /events lists reached the receiver,
 * under one X-Service-Delivery id per event, and the subscription is still active.
 */
import type { Receiver } from "../../bench/harness/receiver.ts";
import { until } from "../../test/helpers/until.ts";
import type { CrashRun, Live } from "./state.ts";

const distinct = <T>(xs: T[]) => [...new Set(xs)];

/**
 * The writes acknowledged by processes before `l` (`all`: by every process) are on `l`.
 * `verifiedInteractions` carries the interactions already found, checked once each.
 */
export async function verifyAcknowledged(run: CrashRun, l: Live, all: boolean, verifiedInteractions: Set<string>) {
  const before = (a: { gen: number }) => all || a.gen < l.gen;
  const listed = new Map<string, any>();
  for (const c of await run.walk(l, "/contacts")) listed.set(c.contactId, c);
  const contact = async (id: string) => {
    // A contact patched while the list was walked may move ahead of the cursor: read it alone.
    const fresh = await run.request(l, "GET", `/contacts/${id}`);
    if (fresh.status === 200) listed.set(id, fresh.json);
    return fresh.status === 200 ? fresh.json : null;
  };
  for (const c of run.creates.filter(before)) {
    const got = listed.get(c.contactId) ?? (await contact(c.contactId));
    if (!got) run.problem(`after start ${l.gen}: acknowledged create ${c.contactId} (start ${c.gen}) is missing`);
    else if (got.email !== c.email) run.problem(`after start ${l.gen}: ${c.contactId} has email ${got.email}, acknowledged ${c.email}`);
  }
  const lastAck = new Map<string, (typeof run.patches)[number]>();
  for (const p of run.patches.filter(before)) if ((lastAck.get(p.contactId)?.seq ?? -1) < p.seq) lastAck.set(p.contactId, p);
  for (const p of lastAck.values()) {
    let got = listed.get(p.contactId);
    const seqOf = (c: any) => (typeof c?.notes === "string" ? Number(/p(\d+)$/.exec(c.notes)?.[1] ?? -1) : -1);
    if (!got || seqOf(got) < p.seq) got = await contact(p.contactId);
    const s = seqOf(got);
    if (s < p.seq || s > (run.maxPatchSeqSent.get(p.contactId) ?? -1))
      run.problem(`after start ${l.gen}: ${p.contactId} has notes ${JSON.stringify(got?.notes)}; acknowledged ${p.notes} (start ${p.gen}) or a later one expected`);
  }
  const pending = run.interactions.filter((i) => before(i) && !verifiedInteractions.has(i.id));
  for (const contactId of distinct(pending.map((i) => i.contactId))) {
    const ids = new Set((await run.walk(l, `/contacts/${contactId}/interactions`)).map((x: any) => x.id));
    for (const i of pending.filter((x) => x.contactId === contactId)) {
      if (!ids.has(i.id)) run.problem(`after start ${l.gen}: acknowledged interaction ${i.id} on ${contactId} (start ${i.gen}) is missing`);
      verifiedInteractions.add(i.id);
    }
  }
}

/** Every event and every delivery, checked on the last process after the writers stopped. */
export async function verifyEvents(run: CrashRun, current: Live, rx: Receiver, hookId: string, deliveryTimeoutMs: number, lastRestart: number) {
  const events = await run.walk(current, "/events");
  const eventIds = new Set(events.map((e: any) => e.id));
  const created = new Set(events.filter((e: any) => e.event === "contact.created").map((e: any) => e.data.contact.contactId));
  const updatedNotes = new Set(events.filter((e: any) => e.event === "contact.updated").map((e: any) => e.data.contact.notes));
  const logged = new Set(events.filter((e: any) => e.event === "interaction_log.created").map((e: any) => e.data.interactionLog.id));
  for (const c of run.creates) if (!created.has(c.contactId)) run.problem(`no contact.created event for acknowledged ${c.contactId}`);
  for (const p of run.patches) if (!updatedNotes.has(p.notes)) run.problem(`no contact.updated event for acknowledged patch ${p.contactId} notes=${p.notes}`);
  for (const i of run.interactions) if (!logged.has(i.id)) run.problem(`no interaction_log.created event for acknowledged ${i.id}`);

  // Counted incrementally, as the receiver's deliveries come in.
  const delivered = new Set<string>();
  let seen = 0;
  let missing = eventIds.size;
  const allDelivered = async () => {
    const arrivals = await rx.sync();
    for (; seen < arrivals.length; seen++) {
      const id = arrivals[seen]!.eventId;
      if (!delivered.has(id)) {
        delivered.add(id);
        if (eventIds.has(id)) missing--;
      }
    }
    return missing === 0;
  };
  await until(allDelivered, { timeoutMs: deliveryTimeoutMs, intervalMs: 100, what: "every event at the receiver" }).catch(() => {});
  const deliveryLagMs = Date.now() - lastRestart;
  const undelivered = [...eventIds].filter((id) => !delivered.has(id));
  if (undelivered.length > 0)
    run.problem(`${undelivered.length} of ${eventIds.size} events never reached the receiver within ${deliveryTimeoutMs} ms, e.g. ${undelivered.slice(0, 5).join(", ")}`);
  for (const id of delivered) if (!eventIds.has(id)) run.problem(`the receiver got event ${id}, which GET /events does not list`);

  await rx.sync(); // the deliveries that came in meanwhile count too
  const deliveryIds = new Map<string, Set<string>>(); // delivery id → event ids
  const perEvent = new Map<string, Set<string>>(); // event id → delivery ids
  for (const r of rx.arrivals) {
    const d = r.delivery;
    const e = r.eventId;
    if (!d) run.problem(`a delivery without X-Service-Delivery (event ${e})`);
    (deliveryIds.get(d) ?? deliveryIds.set(d, new Set()).get(d)!).add(e);
    (perEvent.get(e) ?? perEvent.set(e, new Set()).get(e)!).add(d);
  }
  for (const [d, es] of deliveryIds) if (es.size > 1) run.problem(`delivery id ${d} carried ${es.size} events`);
  for (const [e, ds] of perEvent) if (ds.size > 1) run.problem(`event ${e} came with ${ds.size} delivery ids; one per (event, subscription) expected`);

  const sub = await run.read(current, `/webhooks/${hookId}`);
  if (sub.status !== "active") run.problem(`the subscription ended ${sub.status}: ${sub.lastFailureReason}`);

  const eventsByType: Record<string, number> = {};
  for (const e of events) eventsByType[e.event] = (eventsByType[e.event] ?? 0) + 1;
  return {
    events: eventIds.size,
    eventsByType,
    receiverRequests: rx.arrivals.length,
    distinctDeliveryIds: deliveryIds.size,
    distinctEventIdsDelivered: delivered.size,
    duplicates: rx.arrivals.length - deliveryIds.size,
    deliveryLagMs,
  };
}
