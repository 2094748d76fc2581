import { createHash } from "node:crypto";

import { ADMIN_JS } from "./script.ts";
import { BASE_CSS } from "./styles/base.ts";
import { CONTACT_CSS } from "./styles/contact.ts";
import { CONTACTS_CSS } from "./styles/contacts.ts";
import { FORMS_CSS } from "./styles/forms.ts";
import { HOME_CSS } from "./styles/home.ts";
import { IMPORT_CSS } from "./styles/import.ts";
import { REFERENCE_CSS } from "./styles/reference.ts";
import { SHELL_CSS } from "./styles/shell.ts";
import { WEBHOOKS_CSS } from "./styles/webhooks.ts";

/**
 * The console's stylesheet and script, served by the process (docs/admin.md §3: no CDN,
 * works offline). Colours meet WCAG AA contrast (text #1b1f24 on white 16:1, muted #4b5563
 * 7.6:1, links #0b57d0 6.3:1, errors #b3261e 6.5:1); focus is always visible.
 */
const CSS = [BASE_CSS, SHELL_CSS, HOME_CSS, CONTACTS_CSS, CONTACT_CSS, REFERENCE_CSS, FORMS_CSS, WEBHOOKS_CSS, IMPORT_CSS].join("");

const ASSETS: Record<string, { body: string; type: string; hash: string }> = {
  "admin.css": { body: CSS, type: "text/css; charset=utf-8", hash: createHash("sha256").update(CSS).digest("hex").slice(0, 12) },
  "admin.js": { body: ADMIN_JS, type: "text/javascript; charset=utf-8", hash: createHash("sha256").update(ADMIN_JS).digest("hex").slice(0, 12) },
};

/** An asset's URL, versioned by its content so it can be cached for long. */
export const assetPath = (name: keyof typeof ASSETS & string) => `/admin/assets/${name}?v=${ASSETS[name]!.hash}`;

export function findAsset(name: string) {
  return Object.hasOwn(ASSETS, name) ? ASSETS[name]! : null;
}
