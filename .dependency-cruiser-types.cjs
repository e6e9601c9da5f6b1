/**
 * The engine rules of .dependency-cruiser.cjs once more, over type-only
 * imports too: no engine type (a row, a handle) leaks past src/store/ either.
 * (The cycle and order rules read the run-time graph only.)
 */
const base = require("./.dependency-cruiser.cjs");

module.exports = {
  forbidden: base.forbidden.filter((rule) => rule.name.startsWith("engines-")),
  options: { ...base.options, tsPreCompilationDeps: true },
};
