import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP relay in front of a database: clients connect to `port`, bytes go
 * both ways unchanged. `cut()` drops every open connection and stops
 * listening (new connections are refused, as a stopped database's port
 * refuses them); `restore()` listens on the same port again. The test database
 * itself keeps its data throughout, as a real server's
 * disk does across a restart or a network partition.
 */
export interface TcpRelay {
  port: number;
  /** `url` with its host:port replaced by the relay's. */
  url: string;
  cut(): Promise<void>;
  restore(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRelay(targetUrl: string): Promise<TcpRelay> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    const upstream = connect(Number(target.port), target.hostname);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${port}`;
  return {
    port,
    url: url.toString(),
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
    async restore() {
      await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => (server.off("error", reject), resolve())));
    },
    async stop() {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
