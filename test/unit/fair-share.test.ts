/**
 * Fair delivery slots (src/webhooks/fair-share.ts, docs/webhooks.md §2, §4.4): 4 per subscription,
 * 32 per project, 64 in all, handed out round robin so no project starves another.
 */
import { describe, expect, test } from "bun:test";
import { FairShare } from "../../src/webhooks/fair-share.ts";

const subs = (project: string, n: number) => Array.from({ length: n }, (_, i) => ({ webhookId: `${project}-wh${i}`, projectId: project }));
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const ofProject = (m: Map<string, number>, p: string) => sum(new Map([...m].filter(([id]) => id.startsWith(`${p}-`))));

function takeAll(share: FairShare, slots: Map<string, number>) {
  for (const [id, n] of slots) for (let i = 0; i < n; i++) share.take(id, id.split("-")[0]!);
}

describe("FairShare", () => {
  test("a subscription gets at most 4 slots", () => {
    const slots = new FairShare().allocate(subs("A", 1));
    expect(slots.get("A-wh0")).toBe(4);
  });

  test("one project with 16 subscriptions gets at most 32 of the 64 slots", () => {
    const slots = new FairShare().allocate(subs("A", 16));
    expect(sum(slots)).toBe(32);
    for (const n of slots.values()) expect(n).toBeLessThanOrEqual(4);
  });

  test("a project whose 32 slots are all held still leaves another project its slots", () => {
    const share = new FairShare();
    takeAll(share, share.allocate(subs("A", 16)));
    expect(share.total).toBe(32);
    expect(share.allocate(subs("A", 16)).size).toBe(0);
    const next = share.allocate([...subs("A", 16), ...subs("B", 1)]);
    expect(next.get("B-wh0")).toBe(4);
    expect(ofProject(next, "A")).toBe(0);
  });

  test("slots go round robin across projects: two busy projects share the 64 evenly", () => {
    const slots = new FairShare().allocate([...subs("A", 20), ...subs("B", 20)]);
    expect(ofProject(slots, "A")).toBe(32);
    expect(ofProject(slots, "B")).toBe(32);
  });

  test("with three busy projects none is left out, and the total never passes 64", () => {
    const slots = new FairShare().allocate([...subs("A", 30), ...subs("B", 30), ...subs("C", 30)]);
    expect(sum(slots)).toBe(64);
    for (const p of ["A", "B", "C"]) expect(ofProject(slots, p)).toBeGreaterThanOrEqual(21);
  });

  test("the least recently served subscription of a project goes first", () => {
    const share = new FairShare({ perSubscription: 4, perProject: 32, total: 1 });
    const first = [...share.allocate(subs("A", 3)).keys()];
    share.take(first[0]!, "A");
    share.release(first[0]!, "A");
    const second = [...share.allocate(subs("A", 3)).keys()];
    expect(second[0]).not.toBe(first[0]);
  });

  test("releasing slots gives them back", () => {
    const share = new FairShare();
    takeAll(share, share.allocate(subs("A", 1)));
    expect(share.allocate(subs("A", 1)).size).toBe(0);
    for (let i = 0; i < 4; i++) share.release("A-wh0", "A");
    expect(share.total).toBe(0);
    expect(share.allocate(subs("A", 1)).get("A-wh0")).toBe(4);
  });
});
