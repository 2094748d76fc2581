/** The console's base styles (docs/admin.md §2): system fonts, AA contrast, visible focus, one column under 40 rem. */
export const BASE_CSS = `
*,*::before,*::after{box-sizing:border-box}
[hidden]{display:none!important}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1b1f24;background:#f6f7f9}
a{color:#0b57d0}
a:hover{text-decoration-thickness:2px}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:.5rem}
header.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 1rem;background:#1b1f24;color:#fff}
header.top a.brand{color:#fff;font-weight:700;text-decoration:none}
header.top .who{display:flex;gap:.75rem;align-items:center;min-width:0}
header.top .email{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:16rem;color:#e5e7eb}
header.top button.link{color:#fff}
nav.project{background:#fff;border-bottom:1px solid #d0d5dd;padding:.5rem 1rem}
nav.project .crumb{font-weight:600}
nav.project .sep{margin:0 .4rem;color:#4b5563}
nav.project ul{list-style:none;margin:.4rem 0 0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .5rem}
nav.project li a{display:inline-block;padding:.3rem .6rem;border-radius:6px;text-decoration:none}
nav.project li a[aria-current=page]{background:#e8f0fe;font-weight:600;color:#0842a0}
main{max-width:80rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem;line-height:1.25}
h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
h3{font-size:1.05rem;margin:1rem 0 .4rem}
.card{background:#fff;border:1px solid #d0d5dd;border-radius:8px;padding:1rem;margin:0 0 1rem}
.narrow{max-width:28rem;margin:2rem auto}
.field{margin:0 0 .9rem}
.field label,.group-label{display:block;font-weight:600;margin-bottom:.25rem}
input[type=text],input[type=email],input[type=password],input[type=number],input[type=url],input[type=tel],input[type=search],input[type=datetime-local],input[type=date],input[type=file],select,textarea{width:100%;max-width:100%;font:inherit;padding:.5rem .6rem;border:1px solid #6b7280;border-radius:6px;background:#fff;color:inherit}
textarea{resize:vertical}
.invalid input,.invalid select,.invalid textarea{border-color:#b3261e;border-width:2px}
.hint{color:#4b5563;margin:.1rem 0 .3rem;font-size:.95rem}
.error{color:#b3261e;font-weight:600;margin:.1rem 0 .3rem}
.errors{border:2px solid #b3261e;background:#fff;border-radius:8px;padding:.5rem 1rem;margin:0 0 1rem}
.errors h2{margin:.3rem 0;color:#b3261e;font-size:1.1rem}
.notice{border-left:4px solid #137333;background:#e6f4ea;padding:.6rem 1rem;border-radius:4px}
.check{display:flex;gap:.5rem;align-items:center;margin:.3rem 0}
.check input{width:1.2rem;height:1.2rem;margin:0}
fieldset{border:1px solid #d0d5dd;border-radius:6px;margin:0 0 1rem;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .3rem}
button,.button{font:inherit;font-weight:600;padding:.55rem 1rem;border-radius:6px;border:1px solid #0b57d0;background:#0b57d0;color:#fff;cursor:pointer;text-decoration:none;display:inline-block;line-height:1.3}
button:hover,.button:hover{background:#0842a0}
button.secondary,.button.secondary{background:#fff;color:#0b57d0}
button.danger{background:#b3261e;border-color:#b3261e}
button.link{background:none;border:none;padding:0;color:#0b57d0;text-decoration:underline;font-weight:400}
form.inline{display:inline}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.5rem 0 1rem}
.row{display:grid;gap:0 1rem;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}
.table{overflow-x:auto;background:#fff;border:1px solid #d0d5dd;border-radius:8px;margin:0 0 1rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.5rem .75rem;border-bottom:1px solid #e5e7eb;vertical-align:top}
td{max-width:22rem;overflow-wrap:break-word}
th{font-size:.9rem;color:#374151;background:#f9fafb;white-space:nowrap}
tr:last-child td{border-bottom:none}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td.nowrap{white-space:nowrap}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:.6rem;border-radius:6px;margin:.3rem 0;max-height:24rem;overflow:auto}
dl.props{display:grid;grid-template-columns:minmax(8rem,max-content) 1fr;gap:.3rem 1rem;margin:0}
dl.props dt{font-weight:600;color:#374151}
dl.props dd{margin:0;overflow-wrap:anywhere}
.none{color:#4b5563}
.badge{display:inline-block;padding:0 .5rem;border-radius:999px;font-size:.85rem;font-weight:600;border:1px solid currentColor}
.badge.ok{color:#137333}.badge.bad{color:#b3261e}.badge.off{color:#4b5563}
.once{background:#fff8e1;border:2px solid #8a5a00;border-radius:8px;padding:1rem;margin:0 0 1rem}
.once label{display:block;font-weight:700;margin-bottom:.3rem}
.once textarea{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
.pager{display:flex;gap:1rem;margin:.5rem 0 1rem}
.timeline{list-style:none;padding:0;margin:0}
.timeline li{background:#fff;border:1px solid #d0d5dd;border-radius:8px;padding:.6rem .9rem;margin:0 0 .6rem}
.timeline .meta{color:#4b5563;font-size:.9rem}
progress{width:100%;height:1.2rem}
details summary{cursor:pointer}
.card>h2:first-child{margin-top:0}
.card>:first-child{margin-top:0}
time>span{white-space:nowrap}
.row{align-items:end}
.row.top{align-items:start}
.check+button{margin-top:.5rem}
.timeline p{margin:.25rem 0}
td.prewrap{min-width:12rem}
dl.props.card{margin-bottom:1rem}
code.snippet{display:block;white-space:pre-wrap;overflow-wrap:anywhere;min-width:12rem;max-width:28rem;max-height:8rem;overflow:auto}
.prewrap{white-space:pre-wrap;overflow-wrap:anywhere}
.tag{margin:0 .3rem .3rem 0}
@media (max-width:40rem){
  main{padding:.75rem}
  h1{font-size:1.35rem}
  dl.props{grid-template-columns:1fr}
  dl.props dd{margin-bottom:.4rem}
  header.top .email{max-width:10rem}
  /* Tables become one card per row: nothing scrolls sideways at 390 px (docs/admin.md §2). A cell's data-label names its column. */
  .table{overflow:visible}
  .table thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
  .table table,.table tbody,.table tr,.table td,.table tbody th{display:block;width:auto;max-width:none}
  .table tr{border-bottom:1px solid #d0d5dd;padding:.4rem 0}
  .table tr:last-child{border-bottom:none}
  .table td,.table tbody th{border:none;padding:.15rem .75rem;text-align:left;overflow-wrap:anywhere}
  .table td[data-label]::before{content:attr(data-label);display:block;font-size:.8rem;font-weight:600;color:#4b5563}
  td.num{text-align:left}
  code.snippet{min-width:0}
  pre{max-width:100%}
}
`;
