/**
 * Styles of the console's API keys and webhooks pages (docs/admin.md §2); appended to the base styles.
 * Outcomes are words in badges (Delivered, Failed, Failing, Disabled), the colour only repeats them.
 */
export const WEBHOOKS_CSS = `
.confirm .warning{border:2px solid #b3261e;border-radius:6px;padding:.5rem .8rem;background:#fdecea}
td .key-note,td .event-id{display:block;font-size:.85rem;overflow-wrap:anywhere}
td .id{display:block;font-size:.8rem;overflow-wrap:anywhere}
td .event-name{font-weight:600}
td.result .badge{margin-right:.3rem}
td.result .hint,td.result .next-try{display:block;margin:.2rem 0 0;font-size:.9rem}
.next-try{font-weight:600}
.failure{color:#b3261e;font-weight:600}
.failure time{font-weight:400;color:#4b5563;display:block}
.earlier time{display:block}
fieldset.events .check input{flex:none}
fieldset.events .choices{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr))}
.hook-top{display:grid;gap:0 1rem;grid-template-columns:minmax(0,1fr) minmax(0,1fr);align-items:start}
.hook-top>*{min-width:0}
.hook-more>summary{font-weight:600}
/* Closed, the forms take no room at all (Chromium lays out a closed details' content otherwise). */
.hook-more:not([open])>:not(summary){display:none}
.hook-more[open]>summary{margin-bottom:.6rem}
details.card.hook-more{padding:.75rem 1rem}
.card .hook-more{border-top:1px solid #d0d5dd;padding-top:.6rem;margin-top:.6rem}
table.hooks td:nth-child(2){min-width:10rem}
@media (max-width:60rem){
  .hook-top{grid-template-columns:minmax(0,1fr)}
}
@media (max-width:40rem){
  table.hooks td:nth-child(2){min-width:0}
  /* The summary's names beside their values, as in the cards below: half the height. */
  .hook-top dl.props{grid-template-columns:minmax(0,7.25rem) minmax(0,1fr);gap:.35rem .75rem}
  /* Cards with the column's name beside its value, not above it: half the height (docs/admin.md §2). */
  .table table.paired td[data-label]{display:flow-root;padding-left:8.25rem}
  .table table.paired td[data-label]::before{float:left;width:7.25rem;margin-left:-7.5rem;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:.85rem;line-height:1.5rem}
}
`;
