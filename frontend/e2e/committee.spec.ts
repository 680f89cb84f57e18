/**
 * The Glass Box's committee view end to end, in headless Chromium against the real committee
 * server (`python -m memex.committee.server`): a heuristic episode to its end with the book,
 * the regime belief, both actors' notes and the NAV against cash and the reference; a month
 * decided by hand; the replay of a recorded trace. Run by tests/e2e/test_glass_box.py
 * (MEMEX_URL = the committee server); screenshots go to $MEMEX_E2E_ARTIFACTS.
 */
import { type Locator, type Page, expect, test } from "@playwright/test";
import path from "node:path";

const artifacts = process.env.MEMEX_E2E_ARTIFACTS ?? path.resolve(import.meta.dirname, "../../artifacts/glass_box_committee");
const task = process.env.MEMEX_E2E_TASK ?? "research_risk_conflict";
const seed = process.env.MEMEX_E2E_SEED ?? "1100000";
const tracePath = process.env.MEMEX_E2E_TRACE;

async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(artifacts, name), fullPage: true });
}

async function num(locator: Locator, name: string): Promise<number> {
  return Number(await locator.getAttribute(name));
}

async function openApp(page: Page): Promise<void> {
  const pageErrors: string[] = [];
  page.on("pageerror", (err) => pageErrors.push(err.message));
  await page.goto("/");
  await expect(page.getByTestId("server-status")).toContainText("server memex-committee");
  await expect(page.getByTestId("error-banner")).toHaveCount(0);
  expect(pageErrors).toEqual([]);
}

async function startEpisode(page: Page): Promise<void> {
  await page.getByTestId("mode-live").click();
  await page.getByTestId("task-select").selectOption(task);
  await page.getByTestId("seed-input").fill(seed);
  await page.getByTestId("start-episode").click();
  await expect(page.getByTestId("source-label")).toContainText("live episode");
  await expect(page.getByTestId("log-row")).toHaveCount(1);
}

test("a heuristic committee episode runs to its end and every panel follows it", async ({ page }) => {
  await openApp(page);
  await startEpisode(page);
  // The opening book: every asset and cash, the legacy book over its limits.
  const rows = page.getByTestId("book-row");
  expect(await rows.count()).toBeGreaterThan(4);
  await expect(page.locator('[data-testid="book-row"][data-ticker="CASH"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="risk-flag"][data-level="breach"]').first()).toBeVisible();
  expect(await page.getByTestId("risk-notes").getByTestId("note").count()).toBeGreaterThan(0);
  await expect(page.getByTestId("belief-panel")).toContainText("No action yet");
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "1");
  await expect(page.getByTestId("score-panel")).toContainText("appears at the end");

  // One month by the built-in heuristic: its action, its regime belief, the reference line.
  await page.getByTestId("agent-step").click();
  await expect(page.getByTestId("log-row")).toHaveCount(2);
  await expect(page.getByTestId("log-row").nth(1)).toContainText("heuristic");
  const beliefs = page.getByTestId("belief-row");
  expect(await beliefs.count()).toBeGreaterThan(2);
  let total = 0;
  for (let i = 0; i < (await beliefs.count()); i++) total += await num(beliefs.nth(i), "data-p");
  expect(total).toBeCloseTo(1, 2);
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "2");
  await expect(page.getByTestId("nav-cash")).toHaveAttribute("data-points", "2");
  await expect(page.getByTestId("nav-reference")).toHaveAttribute("data-points", "2");
  await shot(page, "committee-live-midway.png");

  // Play to the end at full speed: 20 months, a score, all three NAV lines over the horizon.
  await page.getByTestId("speed-select").selectOption("0");
  await page.getByTestId("play").click();
  await expect(page.getByTestId("episode-done")).toBeVisible({ timeout: 120_000 });
  await expect(page.getByTestId("play")).toBeDisabled();
  await expect(page.getByTestId("log-row")).toHaveCount(21);
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "21");
  await expect(page.getByTestId("nav-cash")).toHaveAttribute("data-points", "21");
  await expect(page.getByTestId("nav-reference")).toHaveAttribute("data-points", "21");
  // The reference is the heuristic on the same world: the same path as the fund's here.
  expect(await page.getByTestId("nav-reference").getAttribute("data-last")).toBe(await page.getByTestId("nav-fund").getAttribute("data-last"));
  expect(Number(await page.getByTestId("nav-cash").getAttribute("data-last"))).toBeCloseTo(105.12, 1);
  const score = Number(await page.getByTestId("score").textContent());
  expect(Number.isFinite(score)).toBe(true);
  expect(await page.getByTestId("research-notes").getByTestId("note").count()).toBeGreaterThan(0);
  expect(await page.getByTestId("risk-notes").getByTestId("note").count()).toBeGreaterThan(1);
  await shot(page, "committee-live-end.png");

  // Scrubbing back shows the month as it was: shorter lines, no score yet.
  await page.getByTestId("timeline-range").fill("3");
  await expect(page.getByTestId("step-indicator")).toHaveAttribute("data-step", "3");
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "4");
  await expect(page.getByTestId("nav-reference")).toHaveAttribute("data-points", "4");
});

test("a month can be decided by hand with an action from the schema", async ({ page }) => {
  await openApp(page);
  await startEpisode(page);
  await page.getByTestId("tool-select").selectOption("allocate");
  await page.getByTestId("field-weights").fill('{"GOVT": 0.3, "CORP": 0.3}');
  await page.getByTestId("field-reason").fill("Bonds while the book is over its limits.");
  await page.getByTestId("run-tool").click();
  await expect(page.getByTestId("log-row")).toHaveCount(2);
  await expect(page.getByTestId("log-row").nth(1)).toContainText("manual");
  await expect(page.getByTestId("log-row").nth(1)).toContainText("allocate");
  // Weights drift with the month's prices, but stay near the target; the rest is cash.
  expect(await num(page.locator('[data-testid="book-row"][data-ticker="GOVT"]'), "data-weight")).toBeCloseTo(0.3, 1);
  expect(await num(page.locator('[data-testid="book-row"][data-ticker="CASH"]'), "data-weight")).toBeCloseTo(0.4, 1);
  await expect(page.getByTestId("belief-panel")).toContainText("No belief exposed by actions taken by hand");

  // Invalid weights are a typed error observation (the month is spent, the book held).
  await page.getByTestId("tool-select").selectOption("allocate");
  await page.getByTestId("field-weights").fill('{"GOVT": 2}');
  await page.getByTestId("run-tool").click();
  await expect(page.getByTestId("log-row")).toHaveCount(3);
  await expect(page.getByTestId("tool-error")).toContainText("invalid_weights");
  await shot(page, "committee-manual-step.png");
});

test("a recorded committee trace replays month by month", async ({ page }) => {
  test.skip(!tracePath, "MEMEX_E2E_TRACE names no trace file");
  await openApp(page);
  await page.getByTestId("mode-replay").click();
  await page.getByTestId("trace-file").setInputFiles({ name: "aml.jsonl", mimeType: "application/json",
    buffer: Buffer.from('{"type":"header","format":"memex-trace/1","env":"memex","policy":"heuristic","seed":1,"difficulty":"easy","case":null,"reset":{}}\n') });
  await expect(page.getByTestId("error-item")).toContainText("trace of the memex environment");

  await page.getByTestId("trace-file").setInputFiles(tracePath as string);
  await expect(page.getByTestId("trace-info")).toContainText("heuristic");
  await expect(page.getByTestId("log-row")).toHaveCount(21);
  await expect(page.getByTestId("step-indicator")).toHaveAttribute("data-frame", "0");
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "1");
  await page.getByTestId("next-step").click();
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("step-indicator")).toHaveAttribute("data-step", "2");
  expect(await page.getByTestId("belief-row").count()).toBeGreaterThan(2);
  await page.getByTestId("last-step").click();
  await expect(page.getByTestId("nav-fund")).toHaveAttribute("data-points", "21");
  await expect(page.getByTestId("nav-reference")).toHaveAttribute("data-points", "21");
  await expect(page.getByTestId("score")).toBeVisible();
  await shot(page, "committee-replay-end.png");
});
