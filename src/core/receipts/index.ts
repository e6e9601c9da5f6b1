// What other parts of memsvc use from receipts/: explicit named exports only.
export { gistOf } from "./gist";
export { getReceipt, listReceipts, listSessions, receiptView } from "./receipts";
export type { ReceiptQuery, ReceiptView, SessionView } from "./receipts";
export { searchWithReceipt } from "./search";
export { DROP_REASON_HELP, partsText, renderReceipts } from "./render";
export { markUsedFromReceipt } from "./used";
export { feedbackFromAnywhere } from "./feedback";
export type { SearchCaller } from "./search";
export type { ReceiptStore } from "./store";
export { DROP_REASONS } from "./types";
export type { DropReason, NewReceipt, ReceiptDrop, ReceiptFilter, ReceiptKind, ReceiptMemory, ReceiptRow, ReceiptVia, ScoreParts, SessionSummary } from "./types";
export { flushReceipts, recordReceipt } from "./writer";
export { RECEIPT_DROPPED_MAX } from "./tuning";
export type { PendingReceipt, ReceiptWriter } from "./writer";
