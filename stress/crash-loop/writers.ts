/**
 * The writers of the crash loop: each issues creates, patches of its own contacts and
 * interaction logs, chosen from its own seeded stream (so its choices do not depend on how
 * the scheduler interleaves the writers), to whichever process is live, and records every
 * write that process acknowledged (answered 2xx).
 */
import { seededRandom } from "../../test/helpers/random.ts";
import type { CrashRun } from "./state.ts";

export async function writer(run: CrashRun, w: number, seed: number) {
  const mine: string[] = [];
  const choose = seededRandom(seed + 7919 * (w + 1));
  let seq = 0;
  while (!run.done) {
    const l = run.live;
    if (!l) {
      await run.liveGate;
      continue;
    }
    seq++;
    const r = choose();
    const op = mine.length === 0 || r < 0.4 ? "create" : r < 0.75 ? "patch" : "interaction";
    const contactId = mine[Math.floor(choose() * mine.length)]!;
    let method = "POST";
    let path = "/contacts";
    let body: Record<string, unknown>;
    if (op === "create") {
      body = { firstName: "Crash", lastName: `w${w}c${seq}`, email: `w${w}c${seq}@crash.example.com` };
    } else if (op === "patch") {
      method = "PATCH";
      path = `/contacts/${contactId}`;
      body = { notes: `w${w}p${seq}` };
      // Patches of one contact come from this writer only, one at a time: their seqs increase.
      run.maxPatchSeqSent.set(contactId, seq);
    } else {
      path = `/contacts/${contactId}/interactions`;
      body = { type: "note", note: `w${w}i${seq}`, uniqueIdentifier: `w${w}i${seq}` };
    }
    let res;
    try {
      res = await run.request(l, method, path, body);
    } catch {
      // Cut by a kill: the next process comes up through the gate.
      run.unanswered++;
      continue;
    }
    if (res.status >= 200 && res.status < 300) {
      const life = run.lifeOf(l.gen);
      life.total++;
      if (op === "create") life.creates++;
      else if (op === "patch") life.patches++;
      else life.interactions++;
      run.acked();
      if (op === "create") {
        mine.push(res.json.contactId);
        run.creates.push({ gen: l.gen, contactId: res.json.contactId, email: body.email as string });
      } else if (op === "patch") {
        run.patches.push({ gen: l.gen, contactId, notes: body.notes as string, seq });
      } else {
        if (res.status !== 201) run.problem(`POST ${path} with a fresh uniqueIdentifier answered ${res.status}, expected 201`);
        run.interactions.push({ gen: l.gen, contactId, id: res.json.id });
      }
    } else if (res.status >= 500) {
      run.serverErrors++;
      run.problem(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
    } else {
      run.otherStatuses[res.status] = (run.otherStatuses[res.status] ?? 0) + 1;
      run.problem(`${method} ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
    }
  }
}

/**
 * Resolves once process `gen` has acknowledged `target` writes with at least `minEachKind`
 * of each kind, or after `limitMs` (a problem; the loop goes on).
 */
export function servedItsShare(run: CrashRun, gen: number, target: number, minEachKind: number, limitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      run.acked = () => {};
      run.problem(`start ${gen} acknowledged ${JSON.stringify(run.lifeOf(gen))} in ${limitMs} ms, short of its ${target} writes with ${minEachKind} of each kind`);
      resolve();
    }, limitMs);
  });
  const served = new Promise<void>((resolve) => {
    const check = () => {
      const life = run.lifeOf(gen);
      const enough = life.total >= target && life.creates >= minEachKind && life.patches >= minEachKind && life.interactions >= minEachKind;
      if (enough) {
        run.acked = () => {};
        resolve();
      }
    };
    run.acked = check;
    check();
  });
  return Promise.race([served, timedOut]).finally(() => clearTimeout(timer));
}
