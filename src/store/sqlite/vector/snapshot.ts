import { DIMENSIONS } from "../../../embed/types";
import { CODE_BYTES } from "./projection";
import { VectorRows } from "./rows";

export interface IndexSnapshot {
  groupNames: string[];
  seqs: Int32Array;
  groups: Int32Array;
  scales: Float32Array;
  sums: Int32Array;
  /** Each row's prefilter code step (projection.ts encode); NaN: not encoded yet. */
  codeSteps: Float32Array;
  rows: Int8Array;
  /** CODE_BYTES a row: the 4-bit codes of a fixed random projection (projection.ts). */
  codes: Uint8Array;
}

/** Copies of the rows out (the index file) and back in (a restart, or a load from vec0 in group order). */
export class VectorSnapshots extends VectorRows {
  /** The live rows, packed (for the index file): slot i of each array is one vector. */
  snapshot(): IndexSnapshot {
    const { snap, n } = this.beginSnapshot();
    this.copyRows(snap, 0, n);
    return snap;
  }

  /**
   * snapshot(), with the rows and their codes copied `rowsPerSlice` at a time
   * and `pause` awaited between slices: at 100k they are ~45 MB, and the copy
   * in one go held the event loop ~35 ms (tuning.ts INDEX_SNAPSHOT_SLICE_ROWS).
   * Null when the index changed meanwhile (a write, a sync with another
   * process, a load step), since the copy would mix two states, or when
   * `wanted` turned false.
   */
  async snapshotInSlices(rowsPerSlice: number, pause: () => Promise<void>, wanted: () => boolean = () => true): Promise<IndexSnapshot | null> {
    const { snap, n } = this.beginSnapshot();
    const at = this.changes;
    for (let from = 0; from < n; from += rowsPerSlice) {
      if (from > 0) {
        await pause();
        if (this.changes !== at || !wanted()) return null;
      }
      this.copyRows(snap, from, Math.min(n, from + rowsPerSlice));
    }
    return snap;
  }

  /** The snapshot's small arrays, and room for its rows and codes (filled by copyRows). */
  protected beginSnapshot(): { snap: IndexSnapshot; n: number } {
    // Saved in group order: the next start restores a clustered index.
    if (this.clusteredUpTo < this.used || this.dead > 0) this.cluster();
    while (this.fillCodes(Infinity));
    const n = this.used;
    const names: string[] = [];
    for (const [name, id] of this.groupIds) names[id] = name;
    const snap: IndexSnapshot = {
      groupNames: names,
      seqs: this.seqs.slice(0, n),
      groups: this.groups.slice(0, n),
      scales: this.scales.slice(0, n),
      sums: this.sums.slice(0, n),
      codeSteps: this.codeSteps.slice(0, n),
      rows: new Int8Array(n * DIMENSIONS),
      codes: new Uint8Array(n * CODE_BYTES),
    };
    return { snap, n };
  }

  protected copyRows(snap: IndexSnapshot, from: number, to: number): void {
    snap.rows.set(this.q8.subarray(from * DIMENSIONS, to * DIMENSIONS), from * DIMENSIONS);
    snap.codes.set(this.codes.subarray(from * CODE_BYTES, to * CODE_BYTES), from * CODE_BYTES);
  }

  /** Replaces the contents with a snapshot (of the same dimensions). */
  restore(snap: IndexSnapshot): void {
    const n = snap.seqs.length;
    const into = this.beginRestore(snap.groupNames, n);
    into.seqs.set(snap.seqs);
    into.groups.set(snap.groups);
    into.scales.set(snap.scales);
    into.sums.set(snap.sums);
    into.codeSteps.set(snap.codeSteps);
    into.rows.set(snap.rows);
    into.codes.set(snap.codes);
    this.finishRestore(0, n);
  }

  /**
   * Empties the index and makes room for `n` rows in one step; returns its
   * own storage for them, to be filled in place (the index file is read
   * straight into it, no copies) before finishRestore. Searches find
   * nothing meanwhile (`loading`).
   */
  beginRestore(groupNames: string[], n: number): IndexSnapshot {
    this.clear();
    this.changes++;
    this.restoring = n;
    if (this.seqs.length < n) this.grow(n);
    this.groupIds = new Map(groupNames.map((name, id) => [name, id]));
    return {
      groupNames,
      seqs: this.seqs.subarray(0, n),
      groups: this.groups.subarray(0, n),
      scales: this.scales.subarray(0, n),
      sums: this.sums.subarray(0, n),
      codeSteps: this.codeSteps.subarray(0, n),
      rows: this.q8.subarray(0, n * DIMENSIONS),
      codes: this.codes.subarray(0, n * CODE_BYTES),
    };
  }

  /**
   * Writes `vector` into slot `slot` of a begun restore (its seq and group
   * set there by the caller): the load from vec0 places each row where its
   * group's run has it, so the index is in group order without cluster()
   * (~110 ms at 100k in one go, at the moment the index became ready).
   * Coded later by fillCodes.
   */
  placeRow(slot: number, vector: Float32Array): void {
    this.changes++;
    this.writeRow(slot, vector);
    this.codeSteps[slot] = NaN;
  }

  /** Makes rows [from, to) of a begun restore live; called in slices so a large index never holds the event loop long. A slot whose seq is 0 (a placed row that never came) stays empty. */
  finishRestore(from: number, to: number): void {
    this.changes++;
    for (let i = from; i < to; i++) {
      if (this.seqs[i] === 0) {
        this.dead++;
        continue;
      }
      this.slotOf.set(this.seqs[i], i);
      // A file's rows arrive as int8 values: their bounds come from them (~0.3 us a row).
      this.measureRow(i);
      // A file's rows carry their codes; any without one are coded by fillCodes.
      if (Number.isNaN(this.codeSteps[i]) && this.codesComplete) {
        this.codesComplete = false;
        this.codeCursor = i;
      }
    }
    this.used = to;
    this.membersStale = true;
    if (to >= this.restoring) {
      this.restoring = 0;
      // A file saved by snapshot() is already in group order.
      this.clusteredUpTo = this.inGroupOrder() ? to : 0;
    }
  }
}
