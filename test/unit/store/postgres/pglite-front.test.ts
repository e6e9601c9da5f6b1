import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startPglite, type PgliteProcess } from "../../../helpers/pglite";

// The test PostgreSQL (test/helpers/pglite-server.ts) must behave like a real
// server when many client connections overlap: each connection's extended-
// protocol exchange and transaction is its own. PGlite has one backend, so the
// front in test/helpers/pglite-front.ts keeps it for one connection at a time.

let pg: PgliteProcess;
const clients: SQL[] = [];
function client(): SQL {
  const c = new SQL({ url: pg.url, prepare: false, max: 1 });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  pg = await startPglite({ vector: false });
  const c = client();
  await c.unsafe("CREATE TABLE front_rows (id TEXT PRIMARY KEY, owner INT NOT NULL, body TEXT NOT NULL)");
  // PGlite's WebAssembly start-up alone can pass bun's 5 s hook default on a loaded 2-core machine.
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close({ timeout: 0 }).catch(() => {});
  pg?.stop();
});

const big = (tag: string, n: number) => `${tag}:`.padEnd(n, String.fromCharCode(97 + (tag.length % 26)));

describe("the PGlite front under concurrency", () => {
  test("concurrent connections: parameterised queries with large parameters and overlapping transactions each see only their own", async () => {
    const CONNS = 12;
    const ROUNDS = 6;
    const work = Array.from({ length: CONNS }, async (_, k) => {
      const c = client();
      let committed = 0;
      for (let r = 0; r < ROUNDS; r++) {
        // Statements with different parameter counts, so a Bind meeting another
        // connection's Parse fails loudly rather than by chance.
        const echo = big(`echo-${k}-${r}`, 200_000 + k * 1000);
        const [row] = await c.unsafe("SELECT $1::text AS a, length($1::text) AS n, $2::int AS k, $3::int AS r, $4::text AS t", [echo, k, r, `t${k}`]);
        expect(row.a).toBe(echo);
        expect(Number(row.n)).toBe(echo.length);
        expect([row.k, row.r, row.t]).toEqual([k, r, `t${k}`]);
        await c
          .begin(async (tx) => {
            const body = big(`body-${k}-${r}`, 150_000);
            await tx.unsafe("INSERT INTO front_rows (id, owner, body) VALUES ($1, $2, $3)", [`${k}-${r}`, k, body]);
            // Yield so other connections' messages arrive while this transaction is open.
            await Bun.sleep(1);
            const mine = await tx.unsafe("SELECT id, body FROM front_rows WHERE owner = $1 ORDER BY id", [k]);
            expect(mine.length).toBe(committed + 1);
            expect(mine.at(-1).body).toBe(body);
            if (r % 3 === 2) throw new Error("roll back on purpose");
          })
          .then(
            () => committed++,
            (e) => {
              if (!(e instanceof Error) || e.message !== "roll back on purpose") throw e;
            },
          );
      }
      const [{ n }] = await c.unsafe("SELECT count(*)::int AS n FROM front_rows WHERE owner = $1", [k]);
      return n;
    });
    const counts = await Promise.all(work);
    // Rounds 2 and 5 rolled back: 4 of 6 rows committed per connection.
    expect(counts).toEqual(Array.from({ length: CONNS }, () => 4));
  }, 120_000);

  test("an SQL error inside one connection's extended-protocol exchange does not disturb another's", async () => {
    const a = client();
    const b = client();
    const runs = Array.from({ length: 20 }, (_, i) =>
      i % 2
        ? a.unsafe("SELECT $1::int / $2::int AS q", [i, 0]).then(
            () => "no error",
            (e) => String(e.message),
          )
        : b.unsafe("SELECT $1::text || $2::text AS s", [big("x", 50_000), String(i)]).then(([r]) => (r.s.endsWith(String(i)) ? "ok" : "wrong")),
    );
    const results = await Promise.all(runs);
    for (let i = 0; i < results.length; i++) {
      if (i % 2) expect(results[i]).toContain("division by zero");
      else expect(results[i]).toBe("ok");
    }
  }, 60_000);

  test("a client that disconnects inside its transaction is rolled back and releases the database", async () => {
    const port = Number(new URL(pg.url).port);
    const sock = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      sock.once("connect", () => resolve());
      sock.once("error", reject);
    });
    const seen: Buffer[] = [];
    const waitFor = (status: string) =>
      new Promise<void>((resolve) => {
        const check = () => {
          const all = Buffer.concat(seen);
          // ReadyForQuery: 'Z', length 5, status byte.
          for (let i = 0; i + 6 <= all.length; i++) {
            if (all[i] === 0x5a && all.readInt32BE(i + 1) === 5 && String.fromCharCode(all[i + 5]) === status) {
              seen.length = 0;
              return resolve();
            }
          }
        };
        sock.on("data", (d: Buffer) => {
          seen.push(d);
          check();
        });
        check();
      });
    const startup = (() => {
      const params = Buffer.from("user\0postgres\0database\0postgres\0\0");
      const b = Buffer.alloc(8 + params.length);
      b.writeInt32BE(b.length, 0);
      b.writeInt32BE(196608, 4);
      params.copy(b, 8);
      return b;
    })();
    const q = (text: string) => {
      const body = Buffer.from(`${text}\0`);
      const b = Buffer.alloc(5 + body.length);
      b.write("Q", 0);
      b.writeInt32BE(4 + body.length, 1);
      body.copy(b, 5);
      return b;
    };
    sock.write(startup);
    await waitFor("I");
    sock.removeAllListeners("data");
    sock.write(q("BEGIN; INSERT INTO front_rows (id, owner, body) VALUES ('abandoned', -1, 'x')"));
    await waitFor("T");
    sock.destroy();
    // Another connection gets the database (no hang) and never sees the abandoned row.
    const c = client();
    const rows = await c.unsafe("SELECT id FROM front_rows WHERE owner = -1");
    expect(rows.length).toBe(0);
    // And a fresh transaction works, so the backend is not left inside the old one.
    await c.begin(async (tx) => {
      await tx.unsafe("INSERT INTO front_rows (id, owner, body) VALUES ('after', -2, 'y')");
    });
    const [{ n }] = await c.unsafe("SELECT count(*)::int AS n FROM front_rows WHERE owner = -2");
    expect(n).toBe(1);
  }, 60_000);
});
