/** Styles of the console's reference pages (docs/admin.md §2); appended to the base styles. */
export const REFERENCE_CSS = `
`;
