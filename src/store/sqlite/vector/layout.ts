import { DIMENSIONS } from "../../../embed/types";
import { CODE_BYTES } from "./projection";
import { ENCODE_WORK_BYTES } from "./encode-kernel";

// Where things lie in the index's two WebAssembly memories (rows.ts makes the views).

/**
 * The row memory: the quantised query, the code encoder's (encode-kernel.ts)
 * transform scratch, its list of row addresses, codes and steps out (a batch
 * of ENCODE_BATCH rows), then the rows.
 */
export const QUERY_AT = 0;
export const ENCODE_AT = 1024;
export const ENCODE_BATCH = 256;
export const ENCODE_LIST_AT = ENCODE_AT + ENCODE_WORK_BYTES;
export const ENCODE_CODES_AT = ENCODE_LIST_AT + ENCODE_BATCH * 4;
export const ENCODE_STEPS_AT = ENCODE_CODES_AT + ENCODE_BATCH * CODE_BYTES;
/** A vector being stored (f32) for the quantizer (quantize-kernel.ts), and the sum of its int8 values (after the query). */
export const STAGE_AT = ENCODE_STEPS_AT + ENCODE_BATCH * 8;
export const STAGE_SUM_AT = QUERY_AT + DIMENSIONS;
export const ROWS_AT = 32768;
if (STAGE_AT + DIMENSIONS * 4 > ROWS_AT) throw new Error("vector index: the encoder's batch does not fit before the rows");
export const PAGE = 65536;
/** The code memory: the projected query, then the codes, then the code scan's output. */
export const CODE_QUERY_AT = 0;
export const CODES_AT = 1024;
/** Bins of the prefilter's score histogram: at 100k rows a bin near the cut holds tens of rows. */
export const PREFILTER_BINS = 1024;
/** A project's prefilter scans across gaps of up to this many other rows rather than starting another kernel call. */
export const PREFILTER_GAP = 32;
