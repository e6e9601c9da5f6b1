import { basename, extname, resolve } from "node:path";
import type { ReaderOptions, ReadResult } from "../types";
import { checkPath, eachFile, mtimeOf, readText, topFolder, walk } from "./files";
import { noteItems } from "./note";

/**
 * A folder of Markdown notes (Obsidian vault, Basic Memory project, memsvc's
 * own `export --format markdown`). The project is the note's front matter
 * `project`, else its top folder under the root (notes at the root have none).
 */
export async function* readMarkdown(path: string, opts: ReaderOptions): AsyncGenerator<ReadResult> {
  const root = resolve(path);
  if (checkPath(root, "file") === null && /\.md$/i.test(root)) return yield* readNotes([root], resolve(root, ".."), opts);
  const bad = checkPath(root, "folder");
  if (bad) return yield { items: [], problems: [{ source: root, message: bad }], sources: 0 };
  yield* readNotes(
    walk(root, (n) => /\.(md|markdown)$/i.test(n)),
    root,
    opts,
  );
}

function readNotes(files: string[], root: string, opts: ReaderOptions): AsyncGenerator<ReadResult> {
  return eachFile(files, async (file) =>
    noteItems(await readText(file), {
      sourceAgent: "markdown",
      project: topFolder(root, file),
      title: basename(file, extname(file)),
      wholeIfSmall: true,
      defaultType: "knowledge",
      createdAt: Math.min(mtimeOf(file), opts.now),
      file,
    }),
  );
}
