// Browser test of the operator console (docs/console.md), against a running stack (payments-api, psp-sandbox,
// outbox-relay, refunds-worker; ./local-stack.sh). Headless Chromium from Debian's `chromium` package, driven by
// playwright-core (no browser download). Exit 0 when every step behaved as documented.
//
//   API, PSP                 base URLs of payments-api and the sandbox (default 127.0.0.1:8080 / :8089)
//   ADMIN_TOKEN              the operator token (PAYMENTS_ADMIN_TOKEN)
//   WEBHOOK_SECRET           the sandbox's webhook secret (PSP_WEBHOOK_SECRET), to sign one webhook of our own
//   RECON_CMD                runs the reconciler for today (default: ./local-stack.sh recon --date=<today> --lookback=0)
//   SEND_CMD                 sends one Kafka record, given TOPIC KEY VALUE as arguments (default: ./local-stack.sh send)
//   CHROMIUM                 the browser (default /usr/bin/chromium)
//   SCREENSHOTS              a directory to save screenshots in (none by default)
import { chromium } from 'playwright-core';
import { createHmac, randomUUID } from 'node:crypto';
import { execFileSync, execSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

const API = process.env.API ?? 'http://127.0.0.1:8080';
const PSP = process.env.PSP ?? 'http://127.0.0.1:8089';
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? 'dev-operator-token';
const WEBHOOK_SECRET = process.env.WEBHOOK_SECRET ?? 'whsec_local_stack';
const MERCHANT_KEY = process.env.MERCHANT_KEY ?? 'sk_test_demo_merchant_a';
const TODAY = new Date().toISOString().slice(0, 10);
const RECON_CMD = process.env.RECON_CMD ?? `./local-stack.sh recon --date=${TODAY} --lookback=0`;
const SEND_CMD = (process.env.SEND_CMD ?? './local-stack.sh send').split(' ');
const SCREENSHOTS = process.env.SCREENSHOTS;
const OPERATOR = 'ci-operator';

const started = Date.now();
function step(text) {
  console.log(`\n--- ${text} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
function check(condition, message) {
  if (!condition) throw new Error(message);
}
async function until(what, seconds, probe) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
async function sandboxFaults(patch) {
  const r = await fetch(`${PSP}/test/faults`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(patch),
  });
  check(r.ok, `PUT /test/faults ${JSON.stringify(patch)} -> ${r.status}`);
}
async function shot(page, name) {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  // CI runs as root, where Chromium's sandbox cannot start.
  args: ['--no-sandbox'],
});
let failed = false;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const violations = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text());
  });
  page.on('pageerror', (e) => violations.push(String(e)));

  step('1. without a session the console sends us to the login page; log in with the operator token');
  const loginPage = await page.goto(`${API}/console`);
  check(page.url().endsWith('/console/login'), `expected the login page, got ${page.url()}`);
  // From the page's own answer: another GET of the login page would replace the form's one-time CSRF cookie.
  const csp = loginPage.headers()['content-security-policy'];
  check(csp && csp.includes("default-src 'none'") && !csp.includes('unsafe'), `weak or no CSP: ${csp}`);
  // The name field has autofocus; the only stop before it in the tab order must be the skip link.
  check((await page.evaluate(() => document.activeElement?.id)) === 'operator', 'the name field has no focus');
  await page.keyboard.press('Shift+Tab');
  check((await page.evaluate(() => document.activeElement?.textContent)) === 'Skip to content',
    'the skip link is not the first stop of the tab order');
  await page.keyboard.press('Tab');
  await page.fill('#operator', OPERATOR);
  await page.fill('#token', 'wrong-token');
  await page.press('#token', 'Enter');
  await page.waitForSelector('.message');
  const refusal = await page.textContent('.message');
  check(refusal.includes('not the operator token'), `a wrong token was not refused: ${refusal}`);
  await page.fill('#token', ADMIN_TOKEN);
  await shot(page, 'login');
  await page.press('#token', 'Enter');
  await page.waitForURL(`${API}/console`);
  const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
  check(cookie && cookie.httpOnly && cookie.sameSite === 'Strict', `session cookie: ${JSON.stringify(cookie)}`);

  step('2. an UNKNOWN payment: the PSP records the charge but its answer comes too late (tok_timeoutCaptured)');
  // Its webhook is dropped, so that the resolver (not the webhook) settles it.
  await sandboxFaults({ webhookDropRate: 1 });
  const orderId = `console-${randomUUID()}`;
  const idempotencyKey = `console-${randomUUID()}`;
  const captureRequest = () => fetch(`${API}/v1/payments`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${MERCHANT_KEY}`,
      'Idempotency-Key': idempotencyKey,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ orderId, amount: 2500, currency: 'EUR', source: 'tok_timeoutCaptured' }),
  });
  let created;
  try {
    created = await captureRequest();
  } finally {
    await sandboxFaults({ webhookDropRate: 0 });
  }
  const payment = await created.json();
  console.log(created.status, JSON.stringify(payment));
  check(created.status === 202 && payment.status === 'UNKNOWN', `expected 202 UNKNOWN, got ${created.status}`);
  // The client retries with the same key: answered from the key, and recorded as a replay.
  const replayed = await captureRequest();
  check(replayed.headers.get('idempotent-replayed') === 'true', `the retry was not a replay: ${replayed.status}`);
  await page.goto(`${API}/console`);
  const row = page.locator(`tr[data-payment="${payment.id}"]`);
  check((await row.count()) === 1, 'the UNKNOWN payment is not on the live page');
  check((await row.textContent()).includes('UNKNOWN'), 'the live page does not say UNKNOWN');
  await shot(page, 'live');

  step('3. the resolver settles it: the story page shows CAPTURED');
  await until('payment CAPTURED on its story page', 120, async () => {
    await page.goto(`${API}/console/payments/${payment.id}`);
    return (await page.textContent('#payment-status')).trim() === 'CAPTURED';
  });

  step('4. its story: transitions, PSP calls, idempotency key and its replay, ledger, outbox (sent to Kafka)');
  const entries = await until('the outbox event sent', 60, async () => {
    await page.goto(`${API}/console/payments/${payment.id}`);
    const rows = await page.$$eval('#timeline tbody tr', (trs) =>
      trs.map((tr) => ({ source: tr.dataset.source, text: tr.textContent.replace(/\s+/g, ' ') })));
    return rows.some((r) => r.source === 'outbox' && r.text.includes('sent to Kafka')) ? rows : null;
  });
  const has = (source, text) => entries.some((e) => e.source === source && e.text.includes(text));
  check(has('api', 'payment created'), 'no creation entry');
  check(has('transition', 'PROCESSING → UNKNOWN'), 'no PROCESSING → UNKNOWN transition');
  check(has('transition', 'UNKNOWN → CAPTURED'), 'no UNKNOWN → CAPTURED transition');
  check(has('idempotency', 'idempotency key'), 'no idempotency key entry');
  check(has('replay', `idempotency key ${idempotencyKey}: replayed`), 'no replay of the idempotency key');
  check(has('psp', 'PSP charge: error') && has('psp', 'capture'), "no entry for the capture's charge");
  check(has('psp', 'PSP lookup: found captured') && has('psp', 'resolver attempt'), "no entry for the resolver's look-up");
  check(has('ledger', 'psp_receivable 2500') && has('ledger', 'merchant_payable -2500'), 'no ledger entries');
  check(has('outbox', 'PaymentCaptured written'), 'no outbox entry');
  const order = entries.map((e) => e.source);
  check(order.indexOf('api') < order.indexOf('ledger'), 'timeline not in time order');
  check(order.indexOf('psp') < order.lastIndexOf('transition'), 'the PSP calls are not before the last transition');
  await shot(page, 'story');

  step('4b. a refund command for this payment that refunds-worker dead-letters (unknown refund): on the live page');
  const refundId = randomUUID();
  execFileSync(SEND_CMD[0], [...SEND_CMD.slice(1), 'refund-commands', payment.id, JSON.stringify({
    eventId: randomUUID(), type: 'RefundRequested', refundId, paymentId: payment.id, merchantId: randomUUID(),
    amount: 100, currency: 'EUR', pspChargeReference: 'ch_console', occurredAt: new Date().toISOString(),
  })], { stdio: ['ignore', 'inherit', 'inherit'] });
  const dead = await until('the dead letter on the live page', 60, async () => {
    await page.goto(`${API}/console`);
    const row = page.locator(`#dead-letters tr[data-refund="${refundId}"]`);
    return (await row.count()) === 1 ? row.textContent() : null;
  });
  check(dead.includes(`unknown refund ${refundId}`) && dead.includes(payment.id), `dead letter row: ${dead}`);
  check(Number(await page.textContent('#count-dlq')) >= 1, 'the DLQ count is 0');

  step('5. an operations item: the PSP sends charge.failed for the captured payment; resolve it with a note');
  const charge = await (await fetch(`${PSP}/v1/charges?reference=${payment.id}`)).json().catch(() => ({}));
  const body = JSON.stringify({
    id: `evt_console_${randomUUID()}`,
    type: 'charge.failed',
    data: { id: charge.id ?? 'ch_console', reference: payment.id, status: 'declined', declineCode: 'card_declined',
            amount: 2500, currency: 'EUR', created: new Date().toISOString() },
  });
  const t = Math.floor(Date.now() / 1000);
  const signature = createHmac('sha256', WEBHOOK_SECRET).update(`${t}.${body}`).digest('hex');
  const hook = await fetch(`${API}/v1/psp/webhooks`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Psp-Signature': `t=${t},v1=${signature}` },
    body,
  });
  check(hook.status === 200, `webhook -> ${hook.status} ${await hook.text()}`);
  await page.goto(`${API}/console/operations`);
  await page.selectOption('#f-reason', 'webhook_failed_after_captured');
  await page.click('.filters button');
  const item = page.locator(`tr[data-subject="${payment.id}"]`);
  check((await item.count()) === 1, 'the item is not in the queue');
  await shot(page, 'operations');
  await item.locator('a').first().click();
  const note = `checked with the PSP: captured; their charge.failed was sent in error (${orderId})`;
  await page.fill('#note', note);
  await page.click('form.card button');
  await page.waitForSelector('#item-status');
  check((await page.textContent('#item-status')).trim() === 'RESOLVED', 'the item is not RESOLVED');
  const audit = await page.textContent('#audit');
  check(audit.includes(OPERATOR) && audit.includes(note) && audit.includes('resolve_operations_item'),
    'the audit does not show who resolved it with which note');
  await shot(page, 'item');

  step('6. a reconciliation day with injected breaks');
  // The sandbox's file of today gets one line with a changed amount and one charge that never happened.
  await sandboxFaults({ settlementAmountMismatch: 1, settlementPhantom: 1 });
  try {
    try {
      execSync(RECON_CMD, { stdio: 'inherit' });
    } catch (e) {
      if (e.status !== 2) throw e; // 2: reported breaks open (docs/reconciler.md), fine here
    }
  } finally {
    await fetch(`${PSP}/test/faults`, { method: 'DELETE' });
  }
  await page.goto(`${API}/console/recon`);
  const bars = await page.$$eval('#breaks-chart rect.bar', (rects) => rects.map((r) => r.dataset.date));
  check(bars.length === 30, `expected 30 bars, got ${bars.length}`);
  check(new Set(bars).size === 30 && bars[29] === TODAY, `bars are not the last 30 days: ${bars}`);
  for (let i = 1; i < bars.length; i++) {
    check(Date.parse(bars[i]) - Date.parse(bars[i - 1]) === 86400000, `bars ${bars[i - 1]}, ${bars[i]} not consecutive`);
  }
  const todayBar = await page.getAttribute(`#breaks-chart rect.bar[data-date="${TODAY}"]`, 'data-breaks');
  check(Number(todayBar) >= 2, `today's bar shows ${todayBar} breaks`);
  await shot(page, 'recon');
  await page.click(`#runs a[href="/console/recon/${TODAY}"]`);
  const types = await page.$$eval('#breaks tbody tr[data-type]', (trs) => trs.map((tr) => tr.dataset.type));
  check(types.includes('AMOUNT_MISMATCH') && types.includes('MISSING_INTERNAL'), `breaks of today: ${types}`);
  const linked = await page.$$eval('#breaks tr[data-type="AMOUNT_MISMATCH"] a', (as) => as.map((a) => a.href));
  check(linked.length >= 1, 'the AMOUNT_MISMATCH break does not link to its payment');
  await shot(page, 'recon-day');

  step('7. no page broke the Content-Security-Policy');
  check(violations.length === 0, `CSP violations or page errors: ${violations.join('; ')}`);
  console.log('\nconsole browser test: all steps passed');
} catch (e) {
  failed = true;
  console.error(`console browser test FAILED: ${e.message}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
