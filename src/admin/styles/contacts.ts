/** Styles of the console's contacts list (docs/admin.md §2); appended to the base styles. */
export const CONTACTS_CSS = `
.bulk [hidden]{display:none}
.bulk-actions{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:end;background:#fff;margin:0 0 1rem}
.bulk-actions legend{padding:0 .3rem}
.bulk-actions .select-all{flex-basis:100%}
.bulk-actions .field{flex:1 1 14rem;min-width:0;margin:0}
.bulk-actions .actions{margin:.25rem 0 .5rem}
p.total{font-weight:600;margin:.5rem 0}
.table td.select{width:1%}
.table td.select input{width:1.2rem;height:1.2rem;margin:.15rem 0 0}
.table td.wrap,.table td.name{overflow-wrap:anywhere}
/* Wide, an email wraps only at its <wbr> after "@" and dots, never mid-word (docs/admin.md §3.2); under 40rem the base styles wrap anywhere. */
.table td.email{overflow-wrap:break-word}
.more-filters{margin:0 0 .5rem}
.more-filters summary{font-weight:600;margin:.25rem 0 .5rem}
ul.names{margin:.5rem 0;padding-left:1.25rem;overflow-wrap:anywhere}
ul.names li{overflow-wrap:anywhere;min-width:0}
@media (max-width:40rem){
  .bulk-actions .actions button{flex:1 1 auto}
  .table td.select{width:auto}
}
`;
