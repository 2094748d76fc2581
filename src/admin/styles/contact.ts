/** Styles of the console's contact pages (docs/admin.md §2); appended to the base styles. */
export const CONTACT_CSS = `
`;
