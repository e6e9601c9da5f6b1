// What other parts of memsvc use from receipts/: explicit named exports only.
export { gistOf } from "./gist";
export { getReceipt, listReceipts, listSessions, receiptView } from "./receipts";
export type { ReceiptView } from "./receipts";
export { searchSessionOf, searchWithReceipt } from "./search";
export { DROP_REASON_HELP, renderReceipts } from "./render";
export { markUsedFromReceipt } from "./used";
export { feedbackFromAnywhere } from "./feedback";
export type { ReceiptStore } from "./store";
export type { NewReceipt, ReceiptDrop, ReceiptRow, SessionSummary } from "./types";
export { flushReceipts, recordReceipt } from "./writer";
export { RECEIPT_DROPPED_MAX } from "./tuning";
export type { ReceiptWriter } from "./writer";
