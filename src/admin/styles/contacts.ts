/** Styles of the console's contacts pages (docs/admin.md §2); appended to the base styles. */
export const CONTACTS_CSS = `
`;
