/**
 * The console's one script (docs/admin.md §2), served from this server so the policy's
 * `script-src 'self'` holds. Every page works without it; it only adds copy buttons and
 * "select all" boxes, which stay hidden where it does not run.
 */
export const ADMIN_JS = `
"use strict";
for (const button of document.querySelectorAll("button[data-copy]")) button.hidden = false;
for (const box of document.querySelectorAll("input[data-select-all]")) box.closest("[hidden]")?.removeAttribute("hidden");
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
  if (!button) return;
  event.preventDefault();
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const text = "value" in source ? source.value : source.textContent;
  const label = button.textContent;
  const done = (ok) => {
    button.textContent = ok ? "Copied" : "Select and copy";
    if (!ok && "select" in source) source.select();
    setTimeout(() => { button.textContent = label; }, 2000);
  };
  if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
  else done(false);
});
document.addEventListener("change", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLInputElement) || !box.dataset.selectAll) return;
  for (const other of box.form?.querySelectorAll('input[type=checkbox][name="' + box.dataset.selectAll + '"]') ?? []) other.checked = box.checked;
});
`;
