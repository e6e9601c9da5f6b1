/**
 * Import rules of src/ (docs/development.md, "Layers and the capability order").
 * `npm run lint:deps` fails on any of them; type-only imports are left out
 * (they vanish at run time and cannot form a cycle that matters).
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle is a design question: the capability order in docs/development.md answers it.",
      from: { path: "^src/" },
      to: { circular: true, dependencyTypesNot: ["type-only"], viaOnly: { dependencyTypesNot: ["type-only"] } },
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
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
