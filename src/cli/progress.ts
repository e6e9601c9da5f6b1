/**
 * A progress line on stderr. On a terminal: one line redrawn in place (a bar,
 * a percentage, a label), at most every 100 ms. Otherwise (a log file, CI):
 * plain lines, one per 10% step, so the log stays short and readable.
 * Written here: a dozen lines, and the npm bars either redraw unconditionally
 * or pull in a terminal library for what `\r` and a clear-line code do.
 */
export interface Progress {
  update(done: number, total: number, label: string): void;
  done(line: string): void;
}

export function progressLine(stream: NodeJS.WriteStream = process.stderr, width = 30): Progress {
  const tty = stream.isTTY === true;
  let lastDraw = 0;
  let lastStep = -1;
  let drawn = false;
  return {
    update(done, total, label) {
      const ratio = total > 0 ? Math.min(1, done / total) : 1;
      const pct = Math.floor(ratio * 100);
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 100 && done < total) return;
        lastDraw = now;
        const filled = Math.round(ratio * width);
        stream.write(`\r\x1b[2K[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${String(pct).padStart(3)}% ${label}`);
        drawn = true;
      } else {
        const step = Math.floor(pct / 10);
        if (step === lastStep) return;
        lastStep = step;
        stream.write(`${pct}% ${label}\n`);
      }
    },
    done(line) {
      stream.write(tty && drawn ? `\r\x1b[2K${line}\n` : `${line}\n`);
    },
  };
}
