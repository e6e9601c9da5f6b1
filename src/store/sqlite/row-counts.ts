/**
 * The store's memory and link counts as SQL expressions, read from the
 * row_counts table the triggers of migration 0015 keep exact in every
 * writing transaction: one row each, where count(*) read a whole index of
 * the table (7-90 ms at 100k memories).
 */
export const MEMORY_COUNT_SQL = "(SELECT n FROM row_counts WHERE name = 'memories')";
export const LINK_COUNT_SQL = "(SELECT n FROM row_counts WHERE name = 'links')";
