import { createInterface } from "node:readline";

/**
 * The questions `memsvc setup` asks. On a terminal the user answers; piped
 * answers (`printf 'y\n' | memsvc setup`) are read a line per question; when
 * the input ends, every remaining question is answered no, so a setup run
 * with nothing to read changes nothing. --yes answers every question with its
 * default; --dry-run never asks (nothing is written anyway).
 */
export interface Asker {
  /** true for yes. `fallback` answers an empty line (and --yes). */
  confirm(question: string, fallback: boolean): Promise<boolean>;
  close(): void;
}

export function autoAsker(): Asker {
  return { confirm: async (_q, fallback) => fallback, close: () => {} };
}

export function lineAsker(input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Asker {
  const rl = createInterface({ input, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  let ended = false;
  return {
    async confirm(question, fallback) {
      for (;;) {
        output.write(`${question} ${fallback ? "[Y/n]" : "[y/N]"} `);
        const next = ended ? { done: true as const, value: undefined } : await lines.next();
        if (next.done) {
          ended = true;
          output.write("(no answer: no)\n");
          return false;
        }
        const answer = String(next.value).trim().toLowerCase();
        if (!process.stdin.isTTY) output.write(`${answer}\n`);
        if (answer === "") return fallback;
        if (answer === "y" || answer === "yes") return true;
        if (answer === "n" || answer === "no") return false;
        output.write("please answer y or n\n");
      }
    },
    close: () => rl.close(),
  };
}
