/**
 * The people and the queries of bench/search.ts (issue 31; docs/api.md §11.6), apart so a
 * profile of one query kind can draw the same queries: names of many languages, emails,
 * phones of several countries, and for each kind of query a deterministic list.
 */
import { parsePhoneNumberFromString } from "libphonenumber-js";
import { range } from "../http.ts";
import { BIZ_A, BIZ_B, BIZ_C, DOMAINS, FIRST, LAST, prng, type Prng } from "./people.ts";

type Body = Record<string, unknown>;

/** The folding of docs/api.md §11.6: NFKD, marks dropped, the letters NFKD keeps whole spelled out, lower case. */
const SPELLED: Record<string, string> = { ß: "ss", ẞ: "ss", ø: "o", Ø: "o", ł: "l", Ł: "l", đ: "d", Đ: "d", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", þ: "th", Þ: "th", ı: "i" };
const fold = (s: string) => s.normalize("NFKD").replace(/\p{M}+/gu, "").replace(/[ßẞøØłŁđĐæÆœŒþÞı]/g, (c) => SPELLED[c]!).toLowerCase();
const plain = (s: string) => fold(s).replace(/[^a-z0-9]/g, "");
const accented = (s: string) => fold(s) !== s.toLowerCase();

/** Names of many languages, most with letters a plain keyboard lacks. */
const INTL_FIRST = `Łukasz Søren Björn Jürgen François Hélène Chloé Renée Małgorzata Øystein Åsa Émile Inés Iñaki Zoltán Dóra Tomáš Jiří
Ümit Çağla Ségolène Gaëlle Joël Andrés Sebastián Lucía Ramón João Mónica Zoë José Ana-Sofía Jérôme Anaïs Grégoire Bärbel Jörg Kärt
Ævar Þórunn Đorđe Nguyễn Aurélie Frédéric Mikołaj Bartłomiej Wojciech Ewa Magnus Ingrid Nils Kristín`.split(/\s+/);
const INTL_LAST = `Müller Muñoz Strauß Dvořák Novák Nováková Ødegaard Sørensen Jørgensen Björk Åström Lindström Öztürk Yılmaz Şahin Çelik Gómez
Pérez Sánchez Hernández Fernández Martínez Rodríguez González López Núñez Peña Gonçalves Conceição Lefèvre Bélanger Côté Gagné Dubé
Schröder Schäfer Weiß Groß Köhler Krüger Jäger Þórsson Trần Phạm Đặng Wójcik Kowalczyk Zieliński Wiśniewski Dąbrowski Łukaszewicz
Kovačević Horváth Németh Ó-Briain D'Ambrosio Hæggström`.split(/\s+/);
const COMPANY_TLDS = ["com", "io", "de", "co.uk", "fr", "es"];

export interface Person {
  first: string | null;
  last: string | null;
  business: string | null;
  email: string | null;
  phone: string | null;
}

const digits = (n: number, r: Prng) => range(0, n).map(() => r.int(0, 9)).join("");

/** A phone as typed: American in one of two formats, or another country's in international format. */
function phoneOf(r: Prng): string {
  const roll = r.next();
  if (roll < 0.85) {
    const [area, exchange, line] = [r.pick([212, 305, 312, 415, 503, 512, 602, 617, 702, 713, 720, 808, 919, 971]), r.int(200, 999), digits(4, r)];
    return r.next() < 0.5 ? `(${area}) ${exchange}-${line}` : `+1 ${area} ${exchange} ${line}`;
  }
  if (roll < 0.9) return `+49 30 ${r.int(2, 9)}${digits(7, r)}`;
  if (roll < 0.94) return `+44 20 7${digits(3, r)} ${digits(4, r)}`;
  if (roll < 0.97) return `+33 1 ${r.int(40, 59)} ${digits(2, r)} ${digits(2, r)} ${digits(2, r)}`;
  return `+34 6${digits(2, r)} ${digits(3, r)} ${digits(3, r)}`;
}

/** Person `i` (from 1) of project `p`: deterministic, so phase 3 draws its queries from the people phase 1 loaded. */
export function person(p: number, i: number): Person {
  const r = prng(31_000_003 + p * 10_000_019 + i);
  // The lists run from common to rare: squaring a uniform draw favours the front.
  const common = <T>(list: T[]): T => list[Math.floor(list.length * r.next() ** 2)]!;
  const intl = r.next() < 0.15;
  const first = r.next() < 0.97 ? (intl && r.next() < 0.7 ? r.pick(INTL_FIRST) : common(FIRST)) : null;
  const last = r.next() < 0.93 ? (intl ? r.pick(INTL_LAST) : common(LAST)) : null;
  const business = r.next() < 0.12 ? `${r.pick(BIZ_A)} ${r.pick(BIZ_B)} ${r.pick(BIZ_C)}`.trim() : null;
  let email: string | null = null;
  if (r.next() < 0.9) {
    const local = [first, last].filter(Boolean).map((s) => plain(s!)).join(r.next() < 0.7 ? "." : "") || "info";
    const num = r.next() < 0.5 ? String(r.int(1, 999)) : "";
    // ~22,000 company domains: ~20 people each at a million.
    const domain = r.next() < 0.55 ? r.pick(DOMAINS) : `${plain(r.pick(BIZ_A))}${plain(r.pick(BIZ_B))}${r.int(1, 62)}.${r.pick(COMPANY_TLDS)}`;
    email = `${local}${num}@${domain}`;
  }
  const phone = r.next() < 0.7 ? phoneOf(r) : null;
  return { first, last, business, email, phone };
}

export function bodyOf(x: Person): Body {
  return {
    ...(x.first ? { firstName: x.first } : {}),
    ...(x.last ? { lastName: x.last } : {}),
    ...(x.business ? { businessName: x.business } : {}),
    ...(x.email ? { email: x.email } : {}),
    ...(x.phone ? { phone: x.phone } : {}),
    ...(!x.first && !x.last && !x.business && !x.email && !x.phone ? { firstName: "Anonymous" } : {}),
  };
}

// ---------- the queries ----------

export const KINDS = ["name prefix", "two words", "accent-free", "email domain", "phone digits", "last 4 digits", "one typo", "no match"] as const;
export type Kind = (typeof KINDS)[number];

/** Every whole word of the data, folded: a typo query is none of their prefixes. */
const VOCABULARY = [...new Set([...FIRST, ...LAST, ...INTL_FIRST, ...INTL_LAST, ...BIZ_A, ...BIZ_B, ...DOMAINS, ...COMPANY_TLDS, "anonymous", "info"]
  .flatMap((w) => [fold(w), ...fold(w).split(/[^a-z0-9]+/), plain(w)]))].filter(Boolean);
const isPrefixOfAWord = (q: string) => VOCABULARY.some((w) => w.startsWith(q));

/** The longest part of a name split at anything not a letter ("Ana-Sofía" → "ana"/"sofia"), folded. */
const nameWord = (s: string) => fold(s).split(/[^a-z0-9]+/).filter(Boolean).sort((a, b) => b.length - a.length)[0] ?? "";
const firstPart = (s: string) => fold(s).split(/[^a-z0-9]+/).find((w) => w.length >= 3) ?? "";

/** The first `n` digits of `formatted`, with its spaces and punctuation up to there. */
function cut(formatted: string, n: number): string {
  let seen = 0;
  let i = 0;
  for (; i < formatted.length && seen < n; i++) if (/\d/.test(formatted[i]!)) seen++;
  return formatted.slice(0, i);
}

/** A prefix of the national number (6 to 8 digits), written another way than `stored`. */
function phoneQuery(stored: string, r: Prng): string | null {
  const parsed = parsePhoneNumberFromString(stored, "US");
  if (!parsed) return null;
  const national = parsed.formatNational();
  const n = r.int(6, Math.min(8, national.replace(/\D/g, "").length));
  if (parsed.countryCallingCode !== "1") return cut(national, n); // as dialled in its country: "030 212…", "020 7946…", "01 42 68…"
  if (stored.startsWith("+")) return cut(national, n); // "(415) 200-12"
  // "(415) 200-1234" stored: "+1 415 200 12" or "415.200.12".
  return r.next() < 0.5 ? cut(parsed.formatInternational(), n + 1) : cut(national.replace(/\D/g, "").replace(/^(\d{3})(\d{3})/, "$1.$2."), n);
}

function typoOf(last: string, r: Prng): string | null {
  const word = nameWord(last);
  if (word.length < 5 || !/^[a-z]+$/.test(word)) return null;
  for (let tries = 0; tries < 10; tries++) {
    const at = r.int(1, word.length - 1);
    const letter = "abcdefghijklmnopqrstuvwxyz"[r.int(0, 25)]!;
    if (letter === word[at]) continue;
    const typo = word.slice(0, at) + letter + word.slice(at + 1);
    if (!isPrefixOfAWord(typo)) return typo;
  }
  return null;
}

/** `count` queries of each kind from the people of the measured project (`n` of them), deterministic. */
export function queries(n: number, count: number): Record<Kind, string[]> {
  const r = prng(4_242_031);
  const out = Object.fromEntries(KINDS.map((k) => [k, [] as string[]])) as Record<Kind, string[]>;
  const draw = (kind: Kind, make: (x: Person) => string | null) => {
    for (let tries = 0; out[kind].length < count && tries < count * 200; tries++) {
      const q = make(person(0, r.int(1, n)));
      if (q) out[kind].push(q);
    }
  };
  draw("name prefix", (x) => {
    const w = firstPart((r.next() < 0.5 ? x.first : x.last) ?? "");
    return w.length >= 3 ? w.slice(0, r.int(3, Math.min(4, w.length))) : null;
  });
  draw("two words", (x) => {
    const [a, b] = [firstPart(x.first ?? ""), firstPart(x.last ?? "")];
    return a && b ? `${a.slice(0, r.int(3, Math.min(5, a.length)))} ${b.slice(0, r.int(3, Math.min(5, b.length)))}` : null;
  });
  draw("accent-free", (x) => {
    const names = [x.first, x.last].filter((s): s is string => !!s && accented(s));
    return names.length ? nameWord(r.pick(names)) : null;
  });
  draw("email domain", (x) => (x.email ? x.email.slice(x.email.indexOf("@") + 1) : null));
  draw("phone digits", (x) => (x.phone ? phoneQuery(x.phone, r) : null));
  draw("last 4 digits", (x) => (x.phone ? x.phone.replace(/\D/g, "").slice(-4) : null));
  draw("one typo", (x) => (x.last ? typoOf(x.last, r) : null));
  for (let i = 0; i < count; i++) {
    // Letters no name of the data starts with, 6 to 8 of them: neither a prefix nor one typo away from a word.
    out["no match"].push(range(0, r.int(6, 8)).map((k) => (k === 0 ? "qxz" : "qxzvwkj")[r.int(0, k === 0 ? 2 : 6)]).join(""));
  }
  return out;
}

export const EXAMPLE_OF: Record<Kind, string> = {
  "name prefix": "3–4 letters of a first or last name",
  "two words": "first-name prefix + last-name prefix",
  "accent-free": "an accented name folded: muller, lukasz",
  "email domain": "gmail.com, cedarlabs17.io",
  "phone digits": "national prefix in another format: (415) 200-1, 030 1234",
  "last 4 digits": "0143",
  "one typo": "a ≥5-letter last name, one letter substituted",
  "no match": "a made-up word",
};
