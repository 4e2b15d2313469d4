// browser.mjs — what the browser tests of `cordon serve` (console.mjs,
// console-tls.mjs, console-grants.mjs, replay.mjs) share:
//   ok(cond, what)  prints one TAP line ("ok N - what", "not ok N - what")
//   launch(extra)   Debian's chromium, headless, through playwright-core, in
//                   a persistent context in $PROFILE_DIR; extra.args are
//                   added to the common flags, extra's other keys to the
//                   launch options
//   watch(page)     { dialogs, cspErrors }: every dialog noted and
//                   dismissed, every Content-Security-Policy complaint on
//                   the console noted
//   logIn(page)     follows $LINK, presses Log in, waits for $ORIGIN/
//   finish(plan)    prints "1..N" when plan, else "# browser: K of N
//                   passed"; exits 1 when anything failed
import { chromium } from 'playwright-core';

const env = process.env;
let n = 0;
let failed = 0;

export function ok(cond, what) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}`);
}

export function launch(extra = {}) {
  const { args = [], ...options } = extra;
  return chromium.launchPersistentContext(env.PROFILE_DIR, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    ...options,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', ...args],
  });
}

export function watch(page) {
  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  const cspErrors = [];
  page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text()); });
  return { dialogs, cspErrors };
}

export async function logIn(page) {
  await page.goto(env.LINK);
  await page.click('#login');
  await page.waitForURL(env.ORIGIN + '/');
}

export function finish(plan) {
  console.log(plan ? `1..${n}` : `# browser: ${n - failed} of ${n} passed`);
  process.exit(failed ? 1 : 0);
}
