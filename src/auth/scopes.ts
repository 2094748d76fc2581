/** Scopes of docs/api.md §2. */
export const SCOPES = ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"] as const;
export type Scope = (typeof SCOPES)[number];

export function parseScopes(text: string): Scope[] | null {
  const list = text.split(",").map((s) => s.trim()).filter(Boolean);
  if (list.length === 0 || list.some((s) => !(SCOPES as readonly string[]).includes(s))) return null;
  return [...new Set(list)] as Scope[];
}
