/** Styles of the console's forms pages (docs/admin.md §2); appended to the base styles. */
export const FORMS_CSS = `
nav.pager a{font-weight:600}
`;
