/** Styles of the console's import pages (docs/admin.md §2); appended to the base styles. */
export const IMPORT_CSS = `
`;
