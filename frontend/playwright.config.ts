import { defineConfig } from "@playwright/test";
import path from "node:path";

// Run by tests/test_glass_box_e2e.py, which starts the real environment server and passes its
// URL; by hand: MEMEX_URL=http://127.0.0.1:PORT MEMEX_E2E_TRACE=trace.jsonl npm run test:e2e
// The browser is the system Chromium (Debian's `chromium`); Playwright never downloads one and
// gives each run a fresh temporary profile (its own --user-data-dir).
const artifacts = process.env.MEMEX_E2E_ARTIFACTS ?? path.resolve(import.meta.dirname, "../artifacts/glass_box");

export default defineConfig({
  testDir: "e2e",
  timeout: 150_000,
  expect: { timeout: 15_000 },
  workers: 1,
  retries: 0,
  forbidOnly: true,
  outputDir: path.join(artifacts, "test-results"),
  reporter: [["list"], ["json", { outputFile: path.join(artifacts, "e2e-report.json") }]],
  use: {
    baseURL: process.env.MEMEX_URL,
    viewport: { width: 1600, height: 1000 },
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.MEMEX_CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
      ],
    },
  },
});
