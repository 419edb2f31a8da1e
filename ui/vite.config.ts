import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The inspector's build: Preact components compiled by esbuild's JSX transform (no framework
 * plugin needed), one small bundle, written into the server's dist/ where the server reads it.
 * Every asset path is relative, so the server may mount the page at any path (server.inspector).
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  publicDir: "public",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: fileURLToPath(new URL("../dist/ui", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // The polyfill is an inline script, which the page's content security policy refuses.
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    chunkSizeWarningLimit: 200,
  },
  logLevel: "warn",
});
