/**
 * Import rules of src/ (docs/development.md, "Import rules").
 * `npm run lint:deps` (and .ci/run, before the tests) fails on any of them.
 * This graph is the run-time one: type-only imports are erased, and form no
 * cycle; .dependency-cruiser-types.cjs holds the engine rules over them too.
 * The script runs dependency-cruiser under bun: its releases need Node 22+,
 * and bun is what the project already runs on.
 */
// The capability order: a capability may import those on lower rows, never
// one on its own row or above (docs/development.md). A tuning.ts imports no
// code, so any capability may read another's constants. Folders not listed
// (identity, secrets, import, and core's shared files) are not ordered here.
const ORDER = [["memories"], ["search"], ["graph"], ["ingest", "browse"], ["recall", "distill"], ["nightly"], ["analytics"]];
const upward = ORDER.flatMap((row, i) => {
  const above = ORDER.slice(i + 1).flat();
  const beside = row.length > 1 ? row : [];
  return row.map((cap) => ({
    name: `order-${cap}`,
    severity: "error",
    comment: `core/${cap} may not import a capability beside or above it in the order (docs/development.md)`,
    from: { path: `^src/core/${cap}/` },
    to: { path: `^src/core/(${[...above, ...beside.filter((c) => c !== cap)].join("|")})/`, pathNot: "/tuning\\.ts$", dependencyTypesNot: ["type-only"] },
  }));
}).filter((rule) => !rule.to.path.endsWith("()/"));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle is a design question: the capability order in docs/development.md answers it.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "engines-behind-open",
      severity: "error",
      comment: "Only src/store/ (open.ts, the composition root, and failures.ts) names an engine: core, http, mcp and cli go through Storage.",
      from: { path: "^src/(?!store/)" },
      to: { path: "^src/store/(sqlite|postgres)/" },
    },
    {
      name: "engines-apart",
      severity: "error",
      comment: "The two engines never import each other: shared code goes to src/store/shared/ or core's types.",
      from: { path: "^src/store/sqlite/" },
      to: { path: "^src/store/postgres/" },
    },
    {
      name: "engines-apart-pg",
      severity: "error",
      comment: "The two engines never import each other: shared code goes to src/store/shared/ or core's types.",
      from: { path: "^src/store/postgres/" },
      to: { path: "^src/store/sqlite/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    // Imports as they are at run time: type-only imports are erased (and form no cycle that matters).
    tsPreCompilationDeps: false,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
