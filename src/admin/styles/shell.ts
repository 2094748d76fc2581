/**
 * The shell's styles (docs/admin.md §2): the project's menu, copy buttons, confirmation pages.
 * On a phone the sections fold into one "Menu" disclosure, so the navigation takes one row.
 */
export const SHELL_CSS = `
nav.project .menu{display:none}
nav.project .menu summary{display:inline-block;padding:.3rem .6rem;border:1px solid #6b7280;border-radius:6px;font-weight:600}
nav.project .menu ul{flex-direction:column;gap:0}
nav.project .head{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .5rem;min-width:0}
nav.project .crumb{overflow-wrap:anywhere}
button.copy{margin-top:.4rem}
button.copy[hidden]{display:none}
.copyable{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.copyable code{overflow-wrap:anywhere}
.confirm .consequence{border-left:4px solid #b3261e;padding:.3rem .8rem;background:#fff}
.confirm .actions{margin-top:1rem}
a.button.danger{background:#b3261e;border-color:#b3261e;color:#fff}
@media (max-width:40rem){
  nav.project ul.wide{display:none}
  nav.project .menu{display:block;margin-top:.4rem}
}
`;
