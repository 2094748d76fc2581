/** Examples of the OpenAPI document (docs/api.md §16.1): a contact as the API answers it. */
export const contactExample = {
  contactId: "CR-1",
  version: 1,
  identityType: "personal",
  source: "api",
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+1 415 555 0100",
  businessName: null,
  website: null,
  address: { line1: "12 St James's Square", line2: null, city: "London", state: null, zip: "SW1Y 4JH", country: "GB" },
  contactType: { id: "ct_I0FWrkfPO6L4ODEfgC7iRr", name: "Lead", category: "Lead" },
  tags: [{ id: "tag_g1ednLRKwkIMnOT2pTt3yK", name: "vip" }],
  subscribed: true,
  smsSubscribed: false,
  notes: null,
  customFields: { cf_3kTq9bWm1ZsX0aPvL7yRnE: "Analytical engines" },
  createdAt: "2026-01-15T09:30:00.000Z",
  updatedAt: "2026-01-15T09:30:00.000Z",
} as const;

/**
 * The create example works as it is in any project, on the reference page's first "Test
 * request" too: no contactTypeId (the project's default type is used, docs/api.md §10.1),
 * since a fixed type id exists in no project.
 */
export const createContactExample = {
  firstName: "Ada",
  lastName: "Lovelace",
  email: "ada@example.com",
  phone: "+1 415 555 0100",
  tags: ["vip"],
  address: { city: "London", country: "GB" },
  subscribed: true,
};
