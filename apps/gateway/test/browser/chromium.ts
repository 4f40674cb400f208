import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Headless Chromium for the web-page tests: Debian's `chromium` package (`.ci/run` installs it
 * when missing), driven by `playwright-core`, which downloads no browser of its own. Each
 * {@link openBrowser} gets a fresh profile in a temporary folder, removed by `close()`.
 */

/** Where the browser binary is: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!existsSync(path)) throw new Error(`no Chromium at ${path}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`);
  return path;
}

/** Flags for a quiet, offline, sandbox-less (root, container) headless run. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
] as const;

/** A running browser: its context (one profile), a helper to open pages, and `close()`. */
export interface TestBrowser {
  context: BrowserContext;
  /** A new tab with the given viewport (CSS pixels); console errors and failed page loads are collected in `errors`. */
  newPage(viewport?: { width: number; height: number }): Promise<Page & { errors: string[] }>;
  close(): Promise<void>;
}

/** The two widths the pages must work at: a small phone and a laptop. */
export const VIEWPORTS = {
  mobile: { width: 375, height: 812 },
  desktop: { width: 1280, height: 900 },
} as const;

/** Starts Chromium with a fresh temporary profile. */
export async function openBrowser(): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'acg-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath(),
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport: VIEWPORTS.desktop,
      timeout: 60_000,
    });
  } catch (e) {
    await rm(profile, { recursive: true, force: true });
    throw e;
  }
  context.setDefaultTimeout(30_000);
  context.setDefaultNavigationTimeout(30_000);
  return {
    context,
    async newPage(viewport = VIEWPORTS.desktop) {
      const page = (await context.newPage()) as Page & { errors: string[] };
      page.errors = [];
      page.on('pageerror', (e) => page.errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') page.errors.push(`console: ${m.text()}`);
      });
      await page.setViewportSize(viewport);
      return page;
    },
    async close() {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** One axe-core violation, shortened for an assertion message. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

/**
 * Runs axe-core (WCAG 2.0/2.1/2.2 A and AA rules and best practices) on the page as it is now and
 * returns its serious and critical violations (an empty list is a pass).
 */
export async function axeCheck(page: Page): Promise<AxeViolation[]> {
  axeSource ??= (require('axe-core') as { source: string }).source;
  // evaluated over the DevTools protocol, which the pages' Content-Security-Policy (no inline scripts) does not block
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // runs in the page: its globals, typed here without the DOM library
    const g = globalThis as unknown as {
      document: unknown;
      axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> };
    };
    const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Whether the page scrolls sideways (content wider than the viewport): the responsive check. */
export function horizontalOverflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => {
    const g = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
    return { scrollWidth: g.document.documentElement.scrollWidth, innerWidth: g.innerWidth };
  });
}
