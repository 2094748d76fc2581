/** Styles of the console's reference pages (docs/admin.md §2); appended to the base styles. */
export const REFERENCE_CSS = `
.crumbs{margin:0 0 .25rem;color:#4b5563;font-size:.95rem;overflow-wrap:anywhere}
.crumbs+h1{overflow-wrap:anywhere}
.crumbs~p.mono{overflow-wrap:anywhere;color:#4b5563}
`;
