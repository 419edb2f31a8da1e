// The package's ESM entry has no typings of its own; it re-exports what index.d.ts describes.
declare module "fast-json-patch/index.mjs" {
  export * from "fast-json-patch";
}
