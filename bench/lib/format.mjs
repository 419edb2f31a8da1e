// How the benchmarks print figures (shared by `npm run bench` and `npm run bench:peer`).

export const fmtNum = (n, digits) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function fmt(value, unit) {
  if (value === null || value === undefined || !Number.isFinite(value)) return "n/a";
  switch (unit) {
    case "ms":
      return `${fmtNum(value, value < 10 ? 2 : 1)} ms`;
    case "/s":
      return `${fmtNum(value, 0)}/s`;
    case "bytes":
      return value >= 1024 * 1024
        ? `${fmtNum(value / 1024 / 1024, 1)} MB`
        : `${fmtNum(value / 1024, 1)} KB`;
    case "count":
      return fmtNum(value, 0);
    case "cpu-ms":
      return `${fmtNum(value, 3)} ms`;
    default:
      return fmtNum(value, 2);
  }
}
