// console-grants.mjs — drives Debian's chromium (headless, through
// playwright-core) against a running `cordon serve`: log in through a
// one-time link, make a break-glass grant with the form on the grants page
// (a ticket carrying markup), see it listed with the ticket as text, and
// see an approver rule's decision on the held-calls page.  Prints TAP
// lines; tests/integration/8009-serve-rules-browser.sh counts them.
//
// Environment: LINK (an approver's login link), ORIGIN, SHOTS (screenshot
// directory), PROFILE_DIR (a fresh --user-data-dir), RULE (the name of the
// approver rule that decided a call before the browser started).
import fs from 'node:fs';
import path from 'node:path';
import { finish, launch, logIn, ok, watch } from './browser.mjs';

const env = process.env;

const ctx = await launch();
try {
  const page = ctx.pages()[0] || await ctx.newPage();
  const { dialogs, cspErrors } = watch(page);
  fs.mkdirSync(env.SHOTS, { recursive: true });

  await logIn(page);
  const rule = page.locator('table.rules tr.rule-outcome.approved').first();
  await rule.waitFor({ timeout: 10000 });
  ok(await rule.locator('td.rule').textContent() === env.RULE, 'the held-calls page names the approver rule');
  ok(await rule.locator('td.outcome').textContent() === 'approved', '... and what it decided');
  ok((await rule.locator('.requires').textContent()).includes('at most 2 operands'), '... and what it requires');
  ok((await page.locator('table.rules tr.rule-outcome.denied td.why').first().textContent()).includes('<b>x</b>'),
    "... and a denial's reason, its operand's markup shown as text");
  await page.screenshot({ path: path.join(env.SHOTS, 'serve-rules.png'), fullPage: true });

  await page.click('a[href="/grants"]');
  await page.waitForURL(env.ORIGIN + '/grants');
  const form = page.locator('form.grant-new');
  ok(await form.count() === 1, 'the grants page has the form for a new grant');
  await form.locator('select[name=kind]').selectOption('break-glass');
  await form.locator('input[name=agent]').fill('helper');
  await form.locator('input[name=tool]').fill('shell');
  await form.locator('input[name=actions]').fill('execute');
  await form.locator('textarea[name=scope]').fill('argv=ls');
  await form.locator('input[name=ticket]').fill('INC-9<img src=x onerror="window.__xss=1">');
  await form.locator('input[name=ttl]').fill('20m');
  await form.locator('input[name=reason]').fill('from the browser');
  await form.locator('#grant-new').click();
  await page.waitForURL((u) => u.pathname === '/grants');
  const row = page.locator('tr.temp').first();
  await row.waitFor({ timeout: 10000 });
  const id = await row.getAttribute('data-id');
  ok(/^bg-[0-9a-f]+$/.test(id || ''), `the new break-glass grant is listed (${id})`);
  ok((await row.textContent()).includes('INC-9<img src=x onerror='), '... its ticket shown as text');
  ok(await page.locator('main img').count() === 0 && await page.evaluate(() => window.__xss) === undefined &&
    dialogs.length === 0, '... which makes no element and runs no script');
  ok(cspErrors.length === 0, `no Content-Security-Policy violation (${cspErrors.join('; ')})`);
  await page.screenshot({ path: path.join(env.SHOTS, 'serve-grant-new.png'), fullPage: true });
  fs.writeFileSync(path.join(env.PROFILE_DIR, 'grant-id'), id || '');
} catch (e) {
  ok(false, `the browser flow threw: ${e.message.split('\n')[0]}`);
} finally {
  await ctx.close();
}
finish(true);
