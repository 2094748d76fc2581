import { z } from "@hono/zod-openapi";
import { cursorParam, limitParam, listEnvelope } from "../lib/pagination.ts";

export const CATEGORIES = ["Lead", "Customer", "Personnel", "Other"] as const;

export const ContactTypeSchema = z
  .object({ id: z.string(), name: z.string(), category: z.enum(CATEGORIES), isDefault: z.boolean() })
  .openapi("ContactType");
export const InteractionTypeSchema = z.object({ id: z.string(), name: z.string() }).openapi("InteractionType");
export const CustomFieldSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    type: z.string(),
    options: z.array(z.string()).optional().openapi({ description: "Present for select, radio and multiselect." }),
    writable: z.boolean(),
    unique: z.boolean().openapi({
      description: "No two contacts of the project hold the same trimmed value, and the field can be an upsert's matchOn (docs/api.md §18.3). Only text fields can be unique.",
    }),
  })
  .openapi("CustomField");
export const TagSchema = z.object({ id: z.string(), name: z.string() }).openapi("Tag");

export const ReferenceListQuery = z.object({ limit: limitParam, cursor: cursorParam });

export const ContactTypeList = listEnvelope(ContactTypeSchema, "ContactTypeList");
export const InteractionTypeList = listEnvelope(InteractionTypeSchema, "InteractionTypeList");
export const CustomFieldList = listEnvelope(CustomFieldSchema, "CustomFieldList");
export const TagList = listEnvelope(TagSchema, "TagList");
