/**
 * A storage URL fit for a log line or an error message: the password of `user:password@`
 * and of a `password=` query parameter becomes `***`, so that DATABASE_URL's secret never
 * reaches a log collector. Anything else (a SQLite path, `:memory:`) is returned as given.
 */
export function redactStorageUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[^/?#]*@/i, "$1***@")
    .replace(/([?&]password=)[^&#]*/gi, "$1***");
}
