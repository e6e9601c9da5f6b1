import type { PGlite } from "@electric-sql/pglite";
import { createServer, type Server, type Socket } from "node:net";

// Why our own front instead of @electric-sql/pglite-socket's PGLiteSocketServer
// (0.2.17, the newest): that server queues every frontend message on its own
// and only keeps PGlite for one client while `db.isInTransaction()`. Between a
// client's Parse and its Sync (an implicit transaction, not a transaction block)
// another client's Parse/Bind runs on the one backend, so the first client
// meets "unnamed prepared statement does not exist", "bind message supplies 4
// parameters, but prepared statement requires 2", discarded messages after an
// error, or a hang. PGlite has ONE backend; a real server gives each
// connection its own, so this front makes the one backend look like that:
// a connection owns PGlite from its first message until the backend is back at
// ReadyForQuery with status 'I' (idle, outside any transaction), and every
// other connection's messages wait. Test infrastructure only.

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** Frontend messages that end a unit the client waits on (Sync, Query, Flush). */
const UNIT_END = new Set(["S", "Q", "H"]);

/** How long a connection may hold the backend idle in a transaction, others waiting, before stderr hears of it. */
const STALL_REPORT_MS = 10_000;

const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);
function query(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`);
  const out = Buffer.alloc(5 + body.length);
  out.write("Q", 0);
  out.writeInt32BE(4 + body.length, 1);
  body.copy(out, 5);
  return out;
}

/**
 * The status of the last ReadyForQuery ('Z') in a backend byte stream, or
 * null if it holds none: 'I' idle, 'T' in a transaction, 'E' in a failed one.
 */
export function lastReadyStatus(out: Buffer): string | null {
  let status: string | null = null;
  let at = 0;
  while (at + 5 <= out.length) {
    const type = out[at];
    const len = out.readInt32BE(at + 1);
    if (type === 0x5a && len === 5 && at + 6 <= out.length) status = String.fromCharCode(out[at + 5]);
    at += 1 + len;
  }
  return status;
}

interface Unit {
  messages: Buffer[];
  /** The type of the message that closed the unit ('S', 'Q', 'H'), or 'startup'. */
  end: string;
}

class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private started = false;
  readonly units: Unit[] = [];
  private open: Buffer[] = [];
  /** The backend is inside this connection's transaction or extended-protocol exchange. */
  holding = false;
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly front: PgliteFront,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => this.onData(d));
    socket.on("error", () => this.onClose());
    socket.on("close", () => this.onClose());
  }

  private onData(data: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    for (;;) {
      if (!this.started) {
        // Startup-phase packets carry no type byte: length, then a code.
        if (this.buf.length < 8) return;
        const len = this.buf.readInt32BE(0);
        if (this.buf.length < len) return;
        const code = this.buf.readInt32BE(4);
        const packet = this.buf.subarray(0, len);
        this.buf = this.buf.subarray(len);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write("N");
          continue;
        }
        if (code === CANCEL_REQUEST) {
          // One backend, nothing to signal: the protocol expects no answer.
          this.socket.destroy();
          return;
        }
        if (code !== PROTOCOL_3) {
          this.socket.destroy();
          return;
        }
        this.started = true;
        this.units.push({ messages: [Buffer.from(packet)], end: "startup" });
        this.front.wake(this);
        continue;
      }
      if (this.buf.length < 5) return;
      const len = 1 + this.buf.readInt32BE(1);
      if (this.buf.length < len) return;
      const msg = Buffer.from(this.buf.subarray(0, len));
      this.buf = this.buf.subarray(len);
      const type = String.fromCharCode(msg[0]);
      if (type === "X") {
        this.socket.end();
        this.onClose();
        return;
      }
      this.open.push(msg);
      if (UNIT_END.has(type)) {
        this.units.push({ messages: this.open, end: type });
        this.open = [];
        this.front.wake(this);
      }
    }
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.units.length = 0;
    this.front.wake(this);
  }
}

/** Serves one PGlite over the wire protocol, one connection at a time per transaction. */
export class PgliteFront {
  private server: Server | null = null;
  private owner: Connection | null = null;
  private waiting: Connection[] = [];
  private running = false;
  private stallTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly conns = new Set<Connection>();

  constructor(private readonly db: PGlite) {}

  async listen(host = "127.0.0.1"): Promise<number> {
    await this.db.waitReady;
    this.server = createServer((socket) => {
      const c = new Connection(socket, this);
      this.conns.add(c);
      socket.on("close", () => this.conns.delete(c));
    });
    return new Promise((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(0, host, () => resolve((this.server!.address() as { port: number }).port));
    });
  }

  /** A connection has a unit ready or has gone: run what can run. */
  wake(c: Connection): void {
    if (c !== this.owner && !this.waiting.includes(c) && (c.units.length || c.closed)) this.waiting.push(c);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        if (!this.owner) {
          const next = this.waiting.shift();
          if (!next) return;
          this.owner = next;
        }
        const c = this.owner;
        if (c.closed) {
          if (c.holding) await this.abandon();
          c.holding = false;
          this.owner = null;
          continue;
        }
        const unit = c.units.shift();
        if (!unit) {
          // Inside its transaction, waiting for the client's next unit: everyone else waits too.
          if (c.holding) {
            this.watchStall(c);
            return;
          }
          this.owner = null;
          continue;
        }
        let out: Buffer;
        try {
          out = await this.run(unit.messages, (chunk) => {
            if (!c.closed && c.socket.writable) c.socket.write(chunk);
          });
        } catch (e) {
          // PGlite itself failed (not an SQL error, which comes back as an
          // ErrorResponse): drop this client, as a crashed backend would.
          process.stderr.write(`pglite-front: ${e instanceof Error ? e.message : String(e)}\n`);
          c.socket.destroy();
          c.closed = true;
          c.holding = true;
          continue;
        }
        const status = lastReadyStatus(out);
        // A Flush leaves the extended-protocol exchange open (unnamed statement,
        // portal, implicit transaction) until the client's Sync.
        c.holding = unit.end === "H" ? true : status !== null && status !== "I";
        if (!c.holding && !c.units.length) this.owner = null;
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * A client that, inside its transaction, waits for a query on another
   * connection waits forever here (one backend), where a real server would
   * answer: say so on stderr rather than hang silently.
   */
  private watchStall(c: Connection): void {
    if (this.stallTimer || !this.waiting.length) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = null;
      if (this.owner === c && c.holding && !c.units.length && this.waiting.length) {
        process.stderr.write(
          `pglite-front: one connection has held the database inside a transaction for ${STALL_REPORT_MS / 1000} s while ${this.waiting.length} other connection(s) wait; ` +
            "code that awaits another connection inside a transaction deadlocks on PGlite's single backend\n",
        );
      }
    }, STALL_REPORT_MS);
    this.stallTimer.unref?.();
  }

  private async run(messages: Buffer[], onChunk: (b: Buffer) => void): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for (const m of messages) {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(new Uint8Array(m.buffer, m.byteOffset, m.length), {
          onRawData: (data) => {
            const b = Buffer.from(data);
            chunks.push(b);
            onChunk(b);
          },
        }),
      );
    }
    return Buffer.concat(chunks);
  }

  /** A client went away inside its transaction: end the exchange and roll back, as a real backend would. */
  private async abandon(): Promise<void> {
    const status = lastReadyStatus(await this.run([Buffer.from(SYNC)], () => {}));
    if (status !== "I") await this.run([Buffer.from(query("ROLLBACK"))], () => {});
  }

  async close(): Promise<void> {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    for (const c of this.conns) c.socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }
}
