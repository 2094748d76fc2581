/** Styles of the console's home pages (docs/admin.md §2, §3): totals, charts, webhook health; appended to the base styles. */
export const HOME_CSS = `
.home-meta{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;margin:-.5rem 0 1rem;color:#4b5563;overflow-wrap:anywhere}
.home-grid{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(min(100%,24rem),1fr))}
.home-grid>.card{min-width:0}
dl.totals{display:grid;grid-template-columns:repeat(auto-fill,minmax(8.5rem,1fr));gap:.6rem;margin:0 0 .5rem}
dl.totals>div,dl.counts>div{border:1px solid #e5e7eb;border-radius:6px;padding:.4rem .7rem;min-width:0}
dl.totals>div.all{border-color:#0b57d0;background:#f3f7fe}
dl.totals dt,dl.counts dt{font-size:.9rem;font-weight:600;color:#374151}
dl.totals dd{margin:0;font-size:1.5rem;font-weight:700;font-variant-numeric:tabular-nums}
dl.counts{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.5rem;margin:.4rem 0}
dl.counts dd{margin:0;font-size:1.2rem;font-weight:700;font-variant-numeric:tabular-nums}
figure.chart-box{margin:.4rem 0}
figure.chart-box figcaption{margin-top:.3rem}
svg.chart{display:block;width:100%;height:auto;max-height:14rem;background:#fafbfc}
.chart-axis{display:flex;justify-content:space-between;font-size:.85rem;color:#4b5563}
ul.legend{list-style:none;display:flex;flex-wrap:wrap;gap:.2rem 1rem;margin:.3rem 0 0;padding:0;font-size:.9rem}
table.figures{width:auto;min-width:14rem;margin:.4rem 0}
table.figures th[scope=row]{font-weight:400;background:none;color:inherit;font-variant-numeric:tabular-nums}
ul.health{list-style:none;margin:0 0 1rem;padding:0;display:grid;gap:1rem;grid-template-columns:repeat(auto-fill,minmax(min(100%,22rem),1fr))}
ul.health>li.card{margin:0;min-width:0}
ul.health>li.disabled{border-color:#b3261e;border-width:2px}
ul.health h3{margin:0 0 .3rem;overflow-wrap:anywhere}
/* The sign-in page's hint while no admin exists (src/admin/pages/auth.tsx). */
.setup-hint{border-left:4px solid #8a5a00;background:#fff8e1;padding:.5rem 1rem;border-radius:4px;margin:0 0 1rem;overflow-wrap:anywhere}
.setup-hint h2{margin:.2rem 0;font-size:1.05rem}
.setup-hint p{margin:.3rem 0}
@media (max-width:40rem){
  /* The latest changes read as short cards: each cell's column name on its line. */
  section.latest .table td[data-label]::before{display:inline;margin-right:.4rem}
  dl.totals{grid-template-columns:repeat(auto-fill,minmax(6.5rem,1fr))}
}
`;
