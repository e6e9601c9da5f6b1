import { invalid } from "../../errors";
import { strengthenedOnUse } from "../memories";
import type { Services } from "../services";
import { getReceipt } from "./receipts";
import { flushReceipts } from "./writer";

/**
 * POST /recall/used: the capture client found that the agent relied on
 * memories a prompt's block injected (their distinctive words, identifiers,
 * paths or commands came back in its following turns: capture/use.ts). Each
 * counts as a use once per showing: strengthened, a `used` event, and listed
 * as used on the receipt. Ids that were not injected are refused, so a client
 * cannot inflate a memory's uses (they come back as not_injected).
 *
 * What was injected is read from the receipts; for a session, an id no
 * receipt holds (recall.receipts false, or its receipt pruned) is looked up
 * in the session's shown state instead (recall_shown: what recall showed it
 * within the suppression window), so detected use counts either way.
 */
export async function markUsedFromReceipt(
  s: Services,
  input: { receipt?: unknown; session_id?: unknown; ids?: unknown },
): Promise<{ used: string[]; already: string[]; not_injected: string[] }> {
  if (!Array.isArray(input.ids) || input.ids.some((x) => typeof x !== "string")) throw invalid("ids must be an array of memory ids");
  if (input.ids.length > 50) throw invalid("at most 50 ids per request");
  const ids = [...new Set((input.ids as string[]).map((x) => x.trim().toLowerCase()))];
  const hasReceipt = typeof input.receipt === "string" && input.receipt !== "";
  if (!hasReceipt && (typeof input.session_id !== "string" || input.session_id.trim() === ""))
    throw invalid("give receipt or session_id: the prompt (or session) whose block injected them");
  // Each id goes to the receipt that injected it: the one named, or the session's newest that did.
  const byReceipt = new Map<string, { session: string | null; turn: number | null; ids: string[] }>();
  const notInjected: string[] = [];
  const add = (r: { id: string; session_id: string | null; turn: number | null }, id: string) => {
    const entry = byReceipt.get(r.id) ?? { session: r.session_id, turn: r.turn, ids: [] };
    entry.ids.push(id);
    byReceipt.set(r.id, entry);
  };
  let unreceipted: string[] = [];
  if (hasReceipt) {
    const r = await getReceipt(s, input.receipt);
    const injected = new Set(r.injected.map((m) => m.id));
    for (const id of ids) {
      if (injected.has(id)) add({ id: r.id, session_id: r.sessionId, turn: r.turn }, id);
      else notInjected.push(id);
    }
  } else {
    await flushReceipts(s);
    const session = (input.session_id as string).trim();
    for (const id of ids) {
      const [r] = await s.storage.receipts.listReceipts({ sessionId: session, kind: "recall", memoryId: id, limit: 1 });
      if (r) add({ id: r.id, session_id: r.sessionId, turn: r.turn }, id);
      else unreceipted.push(id);
    }
  }
  const used: string[] = [];
  const already: string[] = [];
  const now = s.now();
  const count = async (fresh: string[]) => {
    for (const id of fresh) {
      const row = await s.storage.memories.memoryById(id);
      // Deleted since it was shown: the receipt still says it was used.
      if (row) await s.storage.memories.markUsed(id, now, strengthenedOnUse(row.strength));
      used.push(id);
    }
  };
  for (const [receipt, { session, turn, ids: list }] of byReceipt) {
    const fresh = await s.storage.receipts.addUsed(receipt, list);
    already.push(...list.filter((id) => !fresh.includes(id)));
    // The showing is counted in the session's state too: once the receipt is pruned, the fallback must not count it again.
    if (session && fresh.length) await s.storage.receipts.useShown(session, fresh, turn);
    await count(fresh);
  }
  if (unreceipted.length) {
    const shown = await s.storage.receipts.useShown((input.session_id as string).trim(), unreceipted, null);
    already.push(...shown.already);
    await count(shown.fresh);
    unreceipted = unreceipted.filter((id) => !shown.fresh.includes(id) && !shown.already.includes(id));
  }
  return { used, already, not_injected: [...notInjected, ...unreceipted] };
}
