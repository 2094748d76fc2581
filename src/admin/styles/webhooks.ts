/** Styles of the console's webhooks pages (docs/admin.md §2); appended to the base styles. */
export const WEBHOOKS_CSS = `
`;
