/**
 * Helpers of the dashboard tests (headless Debian Chromium through playwright-core, never a
 * downloaded browser): launching it, a page that records requests leaving the server, CSP
 * violations and script errors, and signing in with a token.
 */
import { existsSync } from 'node:fs';
import { type Browser, type Page, chromium } from 'playwright-core';

export const CHROMIUM = process.env.MEMAUTH_CHROMIUM ?? '/usr/bin/chromium';
// a developer machine without Chromium skips; CI (.ci/run installs it) must run it
export const skip = !existsSync(CHROMIUM) && process.env.CI !== 'true' ? `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` : false;

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A new page of `browser` for the server at `url`: what left the server, CSP refusals and script errors are collected. */
export async function newPage(browser: Browser, url: string, viewport = { width: 1280, height: 900 }): Promise<{ page: Page; external: string[]; cspErrors: string[]; pageErrors: string[] }> {
  const page = await browser.newPage({ viewport });
  const external: string[] = [];
  const cspErrors: string[] = [];
  const pageErrors: string[] = [];
  const origin = new URL(url).origin;
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:')) external.push(u);
  });
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) cspErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { page, external, cspErrors, pageErrors };
}

/** Sign in on the dashboard of `url` with `token` (and the tenant, for the admin token); waits for the memories page. */
export async function signIn(page: Page, url: string, token: string, tenant?: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Bearer token').fill(token);
  if (tenant) await page.getByLabel('Tenant (admin token only)').fill(tenant);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();
}

/** What sticks out of the window sideways: the page's scroll width, the window's width and the first elements past its right edge. */
export function overflow(page: Page): Promise<{ scroll: number; width: number; wide: string[] }> {
  return page.evaluate(() => {
    const d = (
      globalThis as unknown as {
        document: { documentElement: { scrollWidth: number }; querySelectorAll(s: string): Iterable<{ tagName: string; className: string; getBoundingClientRect(): { right: number } }> };
      }
    ).document;
    const w = (globalThis as unknown as { innerWidth: number }).innerWidth;
    const over = [...d.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > w + 1).map((e) => `${e.tagName}.${e.className}:${Math.round(e.getBoundingClientRect().right)}`);
    return { scroll: d.documentElement.scrollWidth, width: w, wide: over.slice(0, 5) };
  });
}
