/**
 * What recall/ needs from storage: recall-index sessions, turns, shown (suppression) state, running topics.
 * One implementation per engine: src/store/sqlite/recall.ts and src/store/postgres/recall.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 *
 * Several servers may serve one session at once (a team behind a load
 * balancer): the turn counter advances by one atomic upsert, and a memory is
 * claimed for a turn by a conditional upsert, so neither is a read-then-write.
 */
export interface RecallStore {
  /**
   * Counts a prompt of the session (creating it) and returns its turn number,
   * distinct for every prompt of the session however many servers answer at
   * once. A new session (turn 1) expires old ones first, in the same transaction.
   */
  nextTurn(sessionId: string, now: number, expiry: RecallExpiry): Promise<number>;
  /**
   * The session's state as its next prompt sees it: the turn that prompt
   * will most likely get, what it must not show again, its topic. A read:
   * the prompt's turn is counted when it ends (finishTurn), so a prompt
   * writes once.
   */
  peekTurn(sessionId: string, window: number): Promise<RecallTurn>;
  /** Whether the session has a running topic (a one-word prompt is then a follow-up). */
  hasTopic(sessionId: string): Promise<boolean>;
  /**
   * Ends a prompt in one transaction: counts its turn (as nextTurn: distinct
   * for every prompt, a new session expires old ones), saves the topic,
   * claims each pick for the turn unless another turn of the session claimed
   * it within the window (a concurrent prompt, on this server or another),
   * and for the claimed ones moves the memories' shown counters and decay
   * clock and records a 'shown' event. Returns the turn and the claimed ids,
   * in the order given.
   */
  finishTurn(end: RecallTurnEnd): Promise<{ turn: number; claimed: string[] }>;
  /** Forgets the session (turns, shown rows, topic): the agent forgot what it was shown. */
  resetSession(sessionId: string): Promise<void>;
  /** Drops expired sessions and, past `max`, the least recently used; returns how many (with dryRun, would). */
  expireSessions(expiry: RecallExpiry, dryRun: boolean): Promise<number>;
  /** The memories the retrievers found, by seq: what the gates read. */
  candidateRows(seqs: readonly number[]): Promise<RecallMemoryRow[]>;
}

/** Which sessions are expired (cut-offs in ms since epoch) and how many may stay. */
export interface RecallExpiry {
  /** Sessions not prompted since go. */
  idleBefore: number;
  /** Sessions of a single prompt not prompted since go. */
  oneTurnIdleBefore: number;
  max: number;
}

export interface RecallTurn {
  /** The session's turn count plus one: the prompt's turn unless another prompt of the session ends first. */
  turn: number;
  /** Memories shown in the session within the suppression window before that turn. */
  suppressed: string[];
  /** The saved topic (JSON, see topic.ts), or null. */
  topic: string | null;
}

export interface RecallTurnEnd {
  sessionId: string;
  now: number;
  expiry: RecallExpiry;
  /** The suppression window in turns: a pick shown by a turn after `turn - window` is not claimed again. */
  window: number;
  /** The topic after this prompt (JSON). */
  topic: string;
  picks: readonly string[];
}

export interface RecallMemoryRow {
  seq: number;
  id: string;
  content: string;
  memoryType: string;
  project: string | null;
  createdAt: number;
  strength: number;
  refreshedAt: number;
}
