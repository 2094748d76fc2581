import type { Db } from "../storage/schema.ts";
import { contactMerged, notFound, type ApiError } from "../errors.ts";
import { mergedTarget } from "../merges/repository.ts";
import { formatContactId } from "./service.ts";

/**
 * Why a write found no live contact at `contactNumber`: 409 ERR_CONTACT_MERGED naming its
 * survivor when it was merged away (docs/api.md §20.3), else 404. Writes answer it for
 * single calls and batch items alike; a GET's 404 becomes a 308 in the app's error handler.
 */
export async function missingContact(db: Db, projectId: string, contactNumber: number): Promise<ApiError> {
  const target = await mergedTarget(db, projectId, contactNumber);
  return target === null ? notFound("Contact") : contactMerged(formatContactId(contactNumber), formatContactId(target));
}
