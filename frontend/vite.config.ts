/// <reference types="vitest/config" />
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// The environment server serves `dist/index.html` at `/` and `dist/assets/` at `/assets`
// (server/app.py), so the build uses base "/" and keeps every file under `assets/`.
// `npm run dev` proxies the API to a server started separately (MEMEX_URL, default :7860).
const api = process.env.MEMEX_URL ?? "http://127.0.0.1:7860";
const apiPaths = ["/reset", "/step", "/state", "/schema", "/info", "/health", "/episodes", "/reference", "/tasks"];

export default defineConfig({
  base: "/",
  plugins: [react()],
  build: { outDir: "dist", assetsDir: "assets", emptyOutDir: true, chunkSizeWarningLimit: 1200 },
  server: { proxy: Object.fromEntries(apiPaths.map((p) => [p, api])) },
  test: { include: ["src/**/*.test.ts"], environment: "node" },
});
