// console-tls.mjs — an approver "on another machine": Debian's chromium
// (headless, through playwright-core) reaches `cordon serve` over TLS by a
// name (console.test, mapped to the loopback address by the browser's own
// resolver rules), trusting only the console's key (its SPKI hash), and
// does every human step of the runbooks in the browser: log in through a
// one-time link, approve a held call (the run finishes), apply a proposal
// (the file changes), see the grant matrix and the re-certification list,
// revoke a break-glass grant.  Prints TAP lines; the calling test
// (tests/integration/8006-serve-browser-tls.sh) counts them.
//
// Environment: LINK, ORIGIN (https://console.test:PORT), PORT, SPKI (the
// server key's base64 SHA-256), CORDON, POLICY, WORKDIR, PROPOSAL (an id),
// PROPOSAL_FILE (the file it changes), GRANT (a break-glass id), SHOTS,
// PROFILE_DIR.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { finish, launch, ok, watch } from './browser.mjs';

const env = process.env;

const victim = path.join(env.WORKDIR, 'victim-tls');
fs.writeFileSync(victim, 'x');
fs.chmodSync(victim, 0o666);

const ctx = await launch({
  viewport: { width: 1100, height: 760 },
  args: [`--host-resolver-rules=MAP console.test 127.0.0.1`,
    `--ignore-certificate-errors-spki-list=${env.SPKI}`],
});
let run;
let page;
try {
  page = ctx.pages()[0] || await ctx.newPage();
  const { cspErrors } = watch(page);
  fs.mkdirSync(env.SHOTS, { recursive: true });
  const shot = (name) => page.screenshot({ path: path.join(env.SHOTS, name), fullPage: true });

  const resp = await page.goto(env.LINK);
  ok(resp.url().startsWith('https://console.test:'), 'the login link is https, by name');
  const sec = await resp.securityDetails();
  ok(sec && /TLS/.test(sec.protocol) && sec.subjectName === 'console.test',
    `over TLS (${sec && sec.protocol}, certificate for ${sec && sec.subjectName})`);
  await page.click('#login');
  await page.waitForURL(env.ORIGIN + '/');
  const c = (await ctx.cookies()).find((x) => x.name === '__Host-cordon_session');
  ok(c && c.secure && c.httpOnly && c.sameSite === 'Strict',
    'the session cookie is __Host-, Secure, HttpOnly, SameSite=Strict');
  await page.waitForFunction(() => document.body.dataset.live === 'yes', null, { timeout: 10000 });
  ok(true, 'the event stream is open over TLS');

  // A held call: appears live, approved, the run finishes.
  run = spawn(env.CORDON, ['run', '--policy', env.POLICY, '--agent', 'coder',
    '--approval-timeout', '60s', '--', 'rm', '-f', victim],
  { cwd: env.WORKDIR, stdio: ['ignore', 'pipe', 'pipe'] });
  const runDone = new Promise((resolve) => run.on('exit', (code) => resolve(code)));
  const call = page.locator('article.call');
  await call.first().waitFor({ timeout: 20000 });
  ok(true, 'a held call appears live');
  await shot('serve-tls-held-call.png');
  await call.first().locator('input[name=comment]').fill('approved over TLS');
  await call.first().locator('button.approve').click();
  await page.waitForURL(env.ORIGIN + '/');
  const code = await Promise.race([runDone, new Promise((r) => setTimeout(() => r('timeout'), 15000))]);
  ok(code === 0 && !fs.existsSync(victim), `approved: the held run finishes its work (${code})`);

  // A proposal: its diff, then Apply.
  await page.click('nav >> text=Proposals');
  await page.locator(`a.prop >> text=${env.PROPOSAL}`).click();
  await page.waitForURL(/\/proposal\?id=/);
  const diff = await page.locator('main').textContent();
  ok(diff.includes('from the agent'), 'the proposal page shows its diff');
  await shot('serve-tls-proposal.png');
  await page.locator('button[value=apply]').click();
  await page.waitForLoadState();
  ok(fs.readFileSync(env.PROPOSAL_FILE, 'utf8').includes('from the agent'),
    'Apply: the change is in the real tree');

  // Grants: the matrix, re-certification, a break-glass grant revoked.
  await page.click('nav >> text=Grants');
  await page.waitForURL(env.ORIGIN + '/grants');
  ok(await page.locator('table.matrix td.cell').count() > 0, 'the grants page shows the agents × tools matrix');
  ok(await page.locator('table.review tr.review').count() > 0, '... and the grants due for re-certification');
  const row = page.locator(`tr.temp[data-id="${env.GRANT}"]`);
  ok(await row.count() === 1, '... and the live break-glass grant');
  await shot('serve-tls-grants.png');
  await row.locator('input[name=reason]').fill('incident closed');
  await row.locator('button').click();
  await page.waitForURL(env.ORIGIN + '/grants');
  ok(await page.locator(`tr.temp[data-id="${env.GRANT}"]`).count() === 0, 'Revoke: the grant is gone from the page');

  // The audit log: the decisions just made, newest first.
  await page.click('nav >> text=Audit log');
  await page.waitForURL(/\/log/);
  const log = await page.locator('main').textContent();
  ok(log.includes('grant.revoked') && log.includes('proposal.applied') && log.includes('approval.approved'),
    'the audit log page shows the revoke, the apply and the approval');
  ok(cspErrors.length === 0, `no Content-Security-Policy violation (${cspErrors.join('; ')})`);
} catch (e) {
  ok(false, `browser flow: ${e.message.split('\n')[0]}`);
  if (page) {
    console.log(`# at ${page.url()}: ${(await page.content()).replace(/\s+/g, ' ').slice(0, 600)}`);
    await page.screenshot({ path: path.join(env.SHOTS, 'serve-tls-failure.png'), fullPage: true }).catch(() => {});
  }
} finally {
  if (run && run.exitCode === null) run.kill();
  await ctx.close();
}
finish(false);
