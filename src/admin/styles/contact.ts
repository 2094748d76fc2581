/**
 * Styles of the console's contact pages (docs/admin.md §2); appended to the
 * base styles. A contact's page puts its fields and its timeline side by side from 64 rem
 * (a 1024 px window), one column below; nothing is wider than the screen at 390 px: grid
 * tracks may shrink below their content (minmax(0, …)) and long text wraps anywhere.
 */
export const CONTACT_CSS = `
.contact-layout{display:grid;grid-template-columns:minmax(0,1fr);gap:0 1.5rem;align-items:start}
.contact-layout>*{min-width:0}
.contact-layout h2.first{margin-top:0}
.contact-timeline>h2:first-child{margin-top:1.5rem}
.contact-timeline .timeline li{overflow-wrap:anywhere}
.contact-timeline dl.props{margin-top:.3rem}
.timeline .kind{font-weight:600;color:#374151}
.timeline li.interaction{border-left:4px solid #0b57d0}
.timeline li.note{border-left:4px solid #6b7280}
.timeline li.submission{border-left:4px solid #137333}
.timeline li.merge{border-left:4px solid #8a5a00}
.add-interaction summary,.merge-with summary{font-weight:600}
.add-interaction[open] summary,.merge-with[open] summary{margin-bottom:.6rem}
.card.trashed{border-left:4px solid #b3261e}
h1 .badge{vertical-align:middle}
@media (min-width:64rem){
  .contact-layout{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}
  .contact-timeline>h2:first-child{margin-top:0}
}
`;
