import { giveFeedback, type FeedbackInput, type FeedbackResult } from "../memories";
import type { Services } from "../services";
import { flushReceipts } from "./writer";

/**
 * Feedback with what receipts know: `irrelevant` finds the prompt the memory
 * was shown for (the receipt given, else its latest showing), `useful`
 * lists the use on the receipt. POST /feedback, memsvc_feedback and the
 * pages all come through here.
 */
export async function feedbackFromAnywhere(s: Services, input: FeedbackInput, source: string): Promise<FeedbackResult> {
  return giveFeedback(s, input, {
    source,
    promptOf: async (receiptId, memoryId) => {
      await flushReceipts(s);
      const r = receiptId ? await s.storage.receipts.receipt(receiptId) : await s.storage.receipts.latestShowing(memoryId);
      return r ? { receipt: r.id, prompt: r.prompt } : null;
    },
    markUsedOn: async (receiptId, memoryId) => {
      await flushReceipts(s);
      const r = await s.storage.receipts.receipt(receiptId);
      if (r?.injected.some((m) => m.id === memoryId)) await s.storage.receipts.addUsed(receiptId, [memoryId]);
    },
  });
}
