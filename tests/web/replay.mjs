// replay.mjs — drives Debian's chromium (headless, through playwright-core)
// to a run's page in `cordon serve` that holds a `cordon shell` recording:
// the recorded output (markup, a bidi override, terminal escapes) shows as
// text, makes no element and runs no script; Play steps through every
// recorded chunk with its timing until the player says it ended; Step and
// Reset work; no Content-Security-Policy violation.  Prints TAP lines for
// tests/integration/8013-serve-replay.sh.
//
// Environment: LINK (a login link), ORIGIN, RUN (the run id), SHOTS,
// PROFILE_DIR.
import path from 'node:path';
import fs from 'node:fs';
import { finish, launch, logIn, ok, watch } from './browser.mjs';

const env = process.env;

const ctx = await launch();
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  const { dialogs, cspErrors } = watch(page);

  await logIn(page);
  await page.goto(`${env.ORIGIN}/run?id=${env.RUN}`);
  ok(await page.locator('#session h2').textContent() === 'Shell session', 'the run page has the shell session');
  const box = page.locator('#player');
  await page.waitForFunction(() => document.getElementById('player').dataset.ready === 'yes', null, { timeout: 10000 });
  const chunks = Number(await box.getAttribute('data-chunks'));
  ok(chunks >= 3, `the player loaded the recording (${chunks} chunks)`);
  const t0 = Date.now();
  await page.click('#rplay');
  ok(await box.getAttribute('data-state') === 'playing', 'Play starts it');
  await page.waitForFunction(() => document.getElementById('player').dataset.state === 'ended', null, { timeout: 15000 });
  const took = Date.now() - t0;
  ok(Number(await box.getAttribute('data-frame')) === chunks, 'it played every chunk');
  ok(took >= 900, `... with the recorded gaps (${took} ms for a session with a 1.2 s pause)`);
  const shown = await page.locator('#rscreen').textContent();
  ok(shown.includes('<b>bold</b>') && shown.includes('<img src=x onerror=window.__xss=1>'),
    'the markup in the output shows as text');
  ok(shown.includes('\\x1b[31m'), 'the terminal escape shows as text (\\x1b)');
  ok(shown.includes('\\u202E'), 'the bidi override shows as a visible escape');
  ok(shown.includes('last line'), 'the last chunk is there');
  ok(await page.locator('main b, main img, #rscreen *').count() === 0, '... and nothing of it makes an element');
  ok(await page.evaluate(() => window.__xss) === undefined && dialogs.length === 0, '... or runs a script');
  fs.mkdirSync(env.SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(env.SHOTS, 'serve-replay.png'), fullPage: true });

  await page.click('#rreset');
  ok(await box.getAttribute('data-frame') === '0' && await page.locator('#rscreen').textContent() === '',
    'Reset empties the screen');
  await page.click('#rstep');
  ok(await box.getAttribute('data-frame') === '1', 'Step shows one chunk');
  ok(!(await page.locator('#rscreen').textContent()).includes('last line'), '... and not the last');
  ok(cspErrors.length === 0, `no Content-Security-Policy violation (${cspErrors.join('; ')})`);
} catch (e) {
  ok(false, `the browser flow: ${e.message}`);
} finally {
  await ctx.close();
}
finish(true);
