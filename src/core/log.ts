export type Level = "debug" | "info" | "warn" | "error";

export type Logger = (level: Level, message: string, fields?: Record<string, unknown>) => void;

/** One line per event on stderr; tests pass their own collector. */
export function stderrLogger(minLevel: Level = "info"): Logger {
  const order: Level[] = ["debug", "info", "warn", "error"];
  const min = order.indexOf(minLevel);
  return (level, message, fields) => {
    if (order.indexOf(level) < min) return;
    const extra = fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : "";
    process.stderr.write(`${new Date().toISOString()} ${level.padEnd(5)} ${message}${extra}\n`);
  };
}

export const silentLogger: Logger = () => {};
