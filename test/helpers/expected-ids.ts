/**
 * Platform ids as the documentation states them, for the end-to-end oracle (expected-items.ts),
 * written from the text and not from mappings/ids.ts:
 * - mappings/README.md § Ids: an id already of lowercase `a-z 0-9 - _` and at most 100 characters is
 *   kept; anything else is lowercased, every other character becomes `_`, the result is cut to 90,
 *   and `_` + a 9-character base-36 hash of the original is appended. Members: `<guid>_member_<uid>`.
 * - connectors/slack-export/README.md § Ids: the hash is cyrb53 with seed 0 over the id's UTF-16
 *   code units, 46 bits (`U061A1R2R` → `u061a1r2r_gf7g8ninm`, checked in the unit test).
 * - mappings/README.md § Ids, collisions: the first legacy id keeps a platform id; a later one gets
 *   its cleaned id cut to 90, `_`, and the hash of `<legacy id>` U+0001 `<n>` for the first free n ≥ 1.
 * - mappings/README.md `missingUsers`: a placeholder's uid is `uidPrefix` + the hash of the legacy id.
 */

/** cyrb53 (a public-domain 53-bit string hash, by bryc) with seed 0. */
function cyrb53(s: string): number {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/** The documented 9-character base-36 hash: cyrb53's low 46 bits. */
export function idHash(s: string): string {
  return (cyrb53(s) % 2 ** 46).toString(36).padStart(9, '0')
}

/** The id rule: kept when already a platform id, else cleaned, cut to 90 and suffixed with the hash. */
export function platformIdOf(legacyId: string): string {
  return /^[a-z0-9_-]{1,100}$/.test(legacyId) ? legacyId : `${cleaned(legacyId)}_${idHash(legacyId)}`
}

const cleaned = (legacyId: string) =>
  legacyId
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '_')
    .slice(0, 90)

/** The `n`-th alternative (n ≥ 1) of a legacy id whose platform id another legacy id holds. */
export function alternativeIdOf(legacyId: string, n: number): string {
  return `${cleaned(legacyId)}_${idHash(`${legacyId}\u0001${n}`)}`
}

/** The documented member key. */
export function memberKeyOf(guid: string, uid: string): string {
  return `${guid}_member_${uid}`
}
