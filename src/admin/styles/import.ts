/** Styles of the console's import pages (docs/admin.md §2); appended to the base styles. */
export const IMPORT_CSS = `
td.wrap{overflow-wrap:anywhere}
.import-check strong{font-variant-numeric:tabular-nums}
.import-actions{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;margin:.75rem 0}
.import-actions form{margin:0}
`;
