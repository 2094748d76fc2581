/** Styles of the console's home pages (docs/admin.md §2); appended to the base styles. */
export const HOME_CSS = `
`;
