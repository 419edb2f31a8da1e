/** How ids are shown: the server's are UUID v7, whose first digits are the time they were made. */

/**
 * An id shown on its own: its first 13 characters. The server's ids are UUID v7, whose first
 * digits are the millisecond it was made: the start a user sees in the full id, the address
 * bar and the log, and finds there (the page's find, grep) as typed.
 */
export function shortId(id: string | undefined | null): string {
  return id ? id.slice(0, SHOWN_ALONE) : "—";
}

const SHOWN_ALONE = 13;
/** The fewest hex digits of a prefix in a list: eight, about a minute of UUID v7 time. */
const LIST_PREFIX_DIGITS = 8;

/**
 * The ids of a list, each as the shortest prefix of it that no other id of the list shares
 * (at least eight digits, dashes kept as in the id), as git shortens commit ids. Ids made
 * around the same time share their first digits (they are the time), so a fixed-length prefix
 * would show several ids alike and a suffix would be nothing the eye finds at the start of the
 * full id; these prefixes tell the rows apart and are what each full id starts with.
 */
export function idPrefixes(ids: readonly string[]): Map<string, string> {
  const unique = [...new Set(ids)].sort();
  const prefixes = new Map<string, string>();
  unique.forEach((id, index) => {
    // In sorted order the id sharing the longest prefix with this one is a neighbour.
    const shared = Math.max(
      commonPrefix(id, unique[index - 1] ?? ""),
      commonPrefix(id, unique[index + 1] ?? ""),
    );
    prefixes.set(id, id.slice(0, prefixEnd(id, shared + 1)));
  });
  return prefixes;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Where a prefix of at least `length` characters and eight digits ends, never on a dash. */
function prefixEnd(id: string, length: number): number {
  let end = 0;
  let digits = 0;
  while (end < id.length && (end < length || digits < LIST_PREFIX_DIGITS)) {
    if (id[end] !== "-") digits++;
    end++;
  }
  while (end < id.length && id[end - 1] === "-") end++;
  return end;
}

/** When a UUID v7 was minted (its first 48 bits are milliseconds since 1970); else null. */
export function uuidTime(id: string): string | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7/i.test(id)) return null;
  const ms = Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);
  return new Date(ms).toISOString();
}
