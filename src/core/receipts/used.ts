import { invalid } from "../../errors";
import { strengthenedOnUse } from "../memories";
import type { Services } from "../services";
import { getReceipt } from "./receipts";

/**
 * POST /recall/used: the capture client found that the agent relied on
 * memories a prompt's block injected (their distinctive words, identifiers,
 * paths or commands came back in its following turns: capture/use.ts). Each
 * counts as a use once per receipt: strengthened, a `used` event, and listed
 * as used on the receipt. Ids the receipt did not inject are refused, so a
 * client cannot inflate a memory's uses.
 */
export async function markUsedFromReceipt(s: Services, input: { receipt?: unknown; ids?: unknown }): Promise<{ receipt: string; used: string[]; already: string[] }> {
  const receipt = await getReceipt(s, input.receipt);
  if (!Array.isArray(input.ids) || input.ids.some((x) => typeof x !== "string")) throw invalid("ids must be an array of memory ids");
  if (input.ids.length > 50) throw invalid("at most 50 ids per request");
  const injected = new Set(receipt.injected.map((m) => m.id));
  const ids = [...new Set((input.ids as string[]).map((x) => x.trim().toLowerCase()))];
  const foreign = ids.filter((id) => !injected.has(id));
  if (foreign.length) throw invalid(`receipt ${receipt.id} did not inject ${foreign.map((id) => id.slice(0, 8)).join(", ")}`);
  const fresh = await s.storage.receipts.addUsed(receipt.id, ids);
  const now = s.now();
  for (const id of fresh) {
    const row = await s.storage.memories.memoryById(id);
    // Deleted since it was shown: the receipt still says it was used.
    if (row) await s.storage.memories.markUsed(id, now, strengthenedOnUse(row.strength));
  }
  return { receipt: receipt.id, used: fresh, already: ids.filter((id) => !fresh.includes(id)) };
}
