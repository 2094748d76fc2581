/**
 * The one generator of people for bench/ and stress/: name lists, a seeded PRNG and
 * drawPerson (deterministic: a seed gives the same people), used by the API seed
 * (./api.ts, `npm run bench`) and the direct SQLite seed (./sqlite.ts, stress/soak.ts); and
 * rawContact, the row the storage limits insert (bench/limits.ts, bench/postgres/limits.ts)
 * with the bodies bench/wrk/post.lua sends.
 */
import { emailKey, phoneKey } from "../../../src/contacts/matching.ts";
import { searchTerms } from "../../../src/contacts/search/terms.ts";
import { formatContactId } from "../../../src/contacts/service.ts";
import { emptyAddress } from "../../../src/contacts/state.ts";
import { seededRandom } from "../../../test/helpers/random.ts";

export const FIRST = `James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William Barbara Richard Susan Joseph Jessica
Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra Donald Ashley Steven Kimberly
Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian Dorothy George Melissa Timothy Deborah Ronald Stephanie
Edward Rebecca Jason Sharon Jeffrey Laura Ryan Cynthia Jacob Kathleen Gary Amy Nicholas Angela Eric Shirley Jonathan Anna Stephen
Brenda Larry Pamela Justin Emma Scott Nicole Brandon Helen Benjamin Samantha Samuel Katherine Gregory Christine Alexander Debra
Frank Rachel Patrick Carolyn Raymond Janet Jack Catherine Dennis Maria Jerry Heather Tyler Diane Aaron Ruth José Julie Adam Olivia
Henry Joyce Nathan Virginia Douglas Victoria Zachary Kelly Peter Lauren Kyle Christina Ethan Joan Walter Evelyn Noah Judith Jeremy
Megan Christian Andrea Keith Cheryl Roger Hannah Terry Jacqueline Gerald Martha Harold Gloria Sean Teresa Austin Ann Carl Sara
Arthur Madison Lawrence Frances Dylan Kathryn Jesse Janice Jordan Jean Bryan Abigail Billy Alice Joe Julia Bruce Judy Gabriel Sophia
Logan Grace Albert Denise Willie Amber Alan Doris Juan Marilyn Wayne Danielle Elijah Beverly Randy Isabella Roy Theresa Vincent
Diana Ralph Natalie Eugene Brittany Russell Charlotte Bobby Marie Mason Kayla Philip Alexis Louis Lori Zoë Ana-Sofía Mei Hiroshi`.split(/\s+/);
export const LAST = `Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas
Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott
Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez Phillips Evans Turner Diaz
Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly
Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders
Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher
Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera
Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington Kennedy Wells
Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw Snyder Mason Dixon
Muñoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox Warren Mills Meyer Rice Schmidt Garza Daniels
O'Brien Van-der-Berg Müller Sato Kowalski Novak Dubois Rossi Jensen`.split(/\s+/);
export const BIZ_A = "Acme Blue Summit Northwind Pioneer Cedar Harbor Golden Silver Apex Evergreen Red Rock Bright Prairie Coastal Urban Maple Iron Lakeside".split(" ");
export const BIZ_B = "Logistics Bakery Dental Consulting Builders Realty Plumbing Analytics Florist Motors Legal Fitness Media Outfitters Labs Studio Farms Supply".split(" ");
export const BIZ_C = ["LLC", "Inc.", "& Co", "Group", "", "", ""];
export const DOMAINS = "gmail.com yahoo.com outlook.com hotmail.com icloud.com aol.com proton.me example.com mail.com fastmail.com".split(" ");
export const CITIES: Array<[string, string, string]> = [
  ["Springfield", "IL", "62701"], ["Austin", "TX", "73301"], ["Portland", "OR", "97201"], ["Denver", "CO", "80202"],
  ["Columbus", "OH", "43004"], ["Madison", "WI", "53703"], ["Raleigh", "NC", "27601"], ["Tucson", "AZ", "85701"],
  ["Boise", "ID", "83702"], ["Albany", "NY", "12207"], ["Savannah", "GA", "31401"], ["Spokane", "WA", "99201"],
];
export const STREETS = "Main Oak Pine Maple Cedar Elm Washington Lake Hill Park".split(" ");
export const AREA = [212, 305, 312, 415, 503, 512, 602, 617, 702, 713, 720, 808, 919, 971];
/** [name, share of contacts]; a contact gets each tag independently. */
export const TAGS: Array<[string, number]> = [
  ["newsletter", 0.3], ["vip", 0.02], ["partner", 0.05], ["trade-show-2024", 0.08],
  ["churn-risk", 0.04], ["wholesale", 0.06], ["beta", 0.01], ["referral", 0.1],
];
/** [category, share]; the project's default types (src/projects/service.ts). */
export const TYPE_SHARE: Array<[string, number]> = [["Customer", 0.5], ["Lead", 0.35], ["Other", 0.1], ["Personnel", 0.05]];

/** The seeded source of test/helpers/random.ts (mulberry32) with pick and int. */
export function prng(seed: number) {
  const next = seededRandom(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  return { next, pick, int };
}

export type Prng = ReturnType<typeof prng>;

export const asciiLower = (s: string) => s.normalize("NFD").replace(/[^A-Za-z0-9]/g, "").toLowerCase();

/**
 * One person's identity: names from `name` (uniform or skewed), a business for 12 %, an
 * email for 90 % (2 % reusing a recent one: the same person entered twice), a phone for 70 %.
 * Draws in a fixed order, so a seed gives the same people.
 */
export function drawPerson(r: Prng, n: number, recentEmails: string[], name: <T>(list: T[]) => T) {
  const isBusiness = r.next() < 0.12;
  const first = r.next() < 0.97 ? name(FIRST) : null;
  const last = r.next() < 0.93 ? name(LAST) : null;
  const business = isBusiness ? `${r.pick(BIZ_A)} ${r.pick(BIZ_B)} ${r.pick(BIZ_C)}`.trim() : null;
  let email: string | null = null;
  const roll = r.next();
  if (roll < 0.02 && recentEmails.length) email = r.pick(recentEmails);
  else if (roll < 0.9) {
    const local = [first, last].filter(Boolean).map((p) => asciiLower(p!)).join(r.next() < 0.7 ? "." : "") || "info";
    const num = r.next() < 0.6 ? String(r.int(1, 9999)) : "";
    email = `${local}${num}@${isBusiness ? `${asciiLower(business!.split(" ")[0]!)}.com` : r.pick(DOMAINS)}`;
    if (r.next() < 0.1) email = email[0]!.toUpperCase() + email.slice(1); // as typed
  }
  if (email && n % 50 === 0) recentEmails[(n / 50) % 2000] = email;
  const phone = r.next() < 0.7
    ? r.next() < 0.5
      ? `(${r.pick(AREA)}) ${r.int(200, 999)}-${String(r.int(0, 9999)).padStart(4, "0")}`
      : `+1 ${r.pick(AREA)} ${r.int(200, 999)} ${String(r.int(0, 9999)).padStart(4, "0")}`
    : null;
  return { isBusiness, first, last, business, email, phone };
}


const RAW_FIRST = ["Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia", "Tim"];
const RAW_LAST = ["Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra"];
/** The tags of bench/wrk/post.lua's bodies. */
export const RAW_TAG_NAMES = ["newsletter", "vip", "referral", "beta"];
const pickAny = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)]!;

/**
 * Contact number `n`'s row values as createContact/toRow derive them from a post.lua body
 * (random names, one tag of RAW_TAG_NAMES when the project has it), for the raw inserts.
 */
export function rawContact(n: number, region: string, tagIds: Map<string, string>) {
  const [first, last] = [pickAny(RAW_FIRST), pickAny(RAW_LAST)];
  const email = `${first.toLowerCase()}.${last.toLowerCase()}.raw.${n}@example.com`;
  const phone = `+1 415 555 ${String(Math.floor(Math.random() * 10000)).padStart(4, "0")}`;
  const address = JSON.stringify({ ...emptyAddress(), city: "Springfield", country: "US" });
  const tags = [tagIds.get(pickAny(RAW_TAG_NAMES))].filter((t): t is string => !!t);
  const key = phoneKey(phone, region);
  const terms = searchTerms({ firstName: first, lastName: last, businessName: null, email, phoneKey: key, contactId: formatContactId(n) });
  return { first, last, email, emailKey: emailKey(email), phone, phoneKey: key, address, tags, terms };
}

/** The contact.created event body of a raw row, service shape (the event INSERT of createContact). */
export function rawEventBody(id: string, projectId: string, n: number, row: ReturnType<typeof rawContact>, now: string) {
  const { first: firstName, last: lastName, email, phone, address } = row;
  return JSON.stringify({ id, event: "contact.created", apiVersion: "v1", projectId, createdAt: now,
    data: { contact: { contactId: formatContactId(n), firstName, lastName, email, phone, tags: RAW_TAG_NAMES.slice(0, 1), address } } });
}
