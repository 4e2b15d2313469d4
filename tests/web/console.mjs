// console.mjs — drives Debian's chromium (headless, through playwright-core)
// against a running `cordon serve`: log in through a one-time link, start a
// held `cordon run` whose arguments carry markup, watch the call appear on
// the page live (no reload), check that the markup is text and ran no
// script, approve it, and see the run finish.  Prints TAP lines; the
// calling test (tests/integration/8001-serve-browser.sh) counts them.
//
// Environment: LINK (an approver's login link), ORIGIN, CORDON, POLICY,
// WORKDIR (where the run removes its file), SHOTS (screenshot directory),
// PROFILE_DIR (a fresh --user-data-dir).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { finish, launch, logIn, ok, watch } from './browser.mjs';

const env = process.env;

const hostile = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>\u202eevil\u001b[31m';
const victim = path.join(env.WORKDIR, 'victim-browser');
fs.writeFileSync(victim, 'x');
fs.chmodSync(victim, 0o666);

const ctx = await launch();
let run;
let page;
try {
  page = ctx.pages()[0] || await ctx.newPage();
  const { dialogs, cspErrors } = watch(page);

  await logIn(page);
  ok(await page.locator('h1').textContent() === 'Held calls', 'the login link leads to the held-calls page');
  const cookies = await ctx.cookies();
  const c = cookies.find((x) => x.name === 'cordon_session');
  ok(c && c.httpOnly && c.sameSite === 'Strict', 'the session cookie is HttpOnly and SameSite=Strict');
  await page.waitForFunction(() => document.body.dataset.live === 'yes', null, { timeout: 10000 });
  ok(true, 'the event stream is open');

  // A held run, started after the page loaded: it must appear without a reload.
  const updatesBefore = await page.evaluate(() => Number(document.body.dataset.updates || 0));
  run = spawn(env.CORDON, ['run', '--policy', env.POLICY, '--agent', 'coder',
    '--approval-timeout', '60s', '--', 'rm', '-f', victim, hostile],
  { cwd: env.WORKDIR, stdio: ['ignore', 'pipe', 'pipe'] });
  const runDone = new Promise((resolve) => run.on('exit', (code) => resolve(code)));
  const call = page.locator('article.call');
  await call.first().waitFor({ timeout: 20000 });
  ok(await page.evaluate(() => Number(document.body.dataset.updates || 0)) > updatesBefore,
    'the held call appears live, over the event stream');
  fs.mkdirSync(env.SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(env.SHOTS, 'serve-held-call.png'), fullPage: true });

  const args = await call.first().locator('dd.args').textContent();
  ok(args.includes('<img src=x onerror=') && args.includes('<script>'), 'the hostile argument shows as text');
  ok(await page.locator('main img').count() === 0 && await page.locator('main script').count() === 0,
    '... and makes no element');
  ok(await page.evaluate(() => window.__xss) === undefined && dialogs.length === 0, '... and runs no script');
  ok(args.includes('\\u202E') || args.includes('\\u202e'), 'the bidi override shows as a visible escape');
  ok(await call.first().locator('dd.sha').textContent().then((s) => /^[0-9a-f]{64}$/.test(s)),
    'the binding SHA-256 is shown');
  ok(await call.first().locator('dd.deadline').getAttribute('data-left').then((s) => Number(s) > 0),
    'the deadline counts down');

  await call.first().locator('input[name=comment]').fill('ok from the browser');
  await call.first().locator('button.approve').click();
  await page.waitForURL(env.ORIGIN + '/');
  const code = await Promise.race([runDone, new Promise((r) => setTimeout(() => r('timeout'), 15000))]);
  ok(code === 0, `the held run finishes with exit 0 after the approval (${code})`);
  ok(!fs.existsSync(victim), '... having done its work');
  await page.locator('p.empty').waitFor({ timeout: 10000 });
  ok(true, 'the page shows no held call any more');
  await page.screenshot({ path: path.join(env.SHOTS, 'serve-approved.png'), fullPage: true });
  ok(cspErrors.length === 0, `no Content-Security-Policy violation (${cspErrors.join('; ')})`);
} catch (e) {
  ok(false, `browser flow: ${e.message.split('\n')[0]}`);
  if (page) {
    console.log(`# at ${page.url()}: ${(await page.content()).replace(/\s+/g, ' ').slice(0, 600)}`);
    await page.screenshot({ path: path.join(env.SHOTS, 'serve-failure.png'), fullPage: true }).catch(() => {});
  }
} finally {
  if (run && run.exitCode === null) run.kill();
  await ctx.close();
}
finish(false);
