/**
 * The shell's styles (docs/admin.md §2): the project's menu, copy buttons, confirmation pages.
 * On a phone the sections fold into one "Menu" disclosure, so the navigation takes one row.
 */
export const SHELL_CSS = `
nav.project .menu{display:none}
nav.project .menu summary{display:inline-block;padding:.3rem .6rem;border:1px solid #6b7280;border-radius:6px;font-weight:600;white-space:nowrap}
nav.project .menu ul{flex-direction:column;gap:0}
nav.project .head{display:flex;align-items:center;gap:.25rem .5rem;min-width:0}
nav.project .head .crumb{white-space:nowrap}
nav.project .head .crumb:last-child{overflow:hidden;text-overflow:ellipsis;min-width:0}
button.copy{margin-top:.4rem}
button.copy[hidden]{display:none}
.copyable{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.copyable code{overflow-wrap:anywhere}
.confirm .consequence{border-left:4px solid #b3261e;padding:.3rem .8rem;background:#fff}
.confirm .actions{margin-top:1rem}
a.button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
@media (max-width:40rem){
  /* One row: the crumbs (the project's name shortened with an ellipsis) and "Menu", whose list opens over the page. */
  nav.project{position:relative;display:flex;align-items:center;justify-content:space-between;gap:.5rem}
  nav.project ul.wide{display:none}
  nav.project .menu{display:block;flex:none}
  nav.project .menu[open] ul{position:absolute;left:0;right:0;top:100%;margin:0;padding:.4rem 1rem;background:#fff;border-bottom:1px solid #d0d5dd;box-shadow:0 4px 8px rgba(0,0,0,.12);z-index:5}
  nav.project .menu li a{display:block;padding:.45rem .6rem}
}
`;
