// The web console in Debian's chromium, headless, through playwright-core,
// for test_console.py. Prints "ok   …" / "FAIL …" lines, which it records.
// env: PLAYWRIGHT (the package's path), CHROMIUM, CONSOLE_URL, API_KEY (a
// project key), PROJECT_ID and KEY_ID (its project and id, to revoke it),
// WRONG_KEY_MESSAGE (the API's refusal of a wrong key), SCREENSHOTS (a
// directory), and cp_harness's AIRLOCK_ADMIN_KEY and AIRLOCK_TEST_CONTROL.
'use strict';
const net = require('net');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT);

// A sandbox boots under TCG on a shared machine: generous, never a measure.
const BOOT_MS = 240000;

function check(cond, what) {
  console.log((cond ? 'ok   ' : 'FAIL ') + what);
}

async function step(page, name) {
  await page.screenshot({ path: path.join(process.env.SCREENSHOTS, name + '.png'), fullPage: true });
}

// Waits for cond (a locator's assertion) and records whether it came.
async function expectSoon(what, fn) {
  try {
    await fn();
    check(true, what);
  } catch (err) {
    check(false, what + ' (' + err.message.split('\n')[0] + ')');
  }
}

// A call made elsewhere (another tab, a script) while the page is open:
// only the event stream can bring its effect to the table.
async function elsewhere(method, path, body, key = process.env.API_KEY) {
  const origin = new URL(process.env.CONSOLE_URL).origin;
  return fetch(origin + path, {
    method,
    headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body,
  });
}

// One command to cp_harness (cp_control.h); true when it answered "ok".
function control(command) {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(process.env.AIRLOCK_TEST_CONTROL);
    let answer = '';
    s.on('connect', () => s.write(command + '\n'));
    s.on('data', (d) => {
      answer += d;
      if (answer.includes('\n')) {
        s.end();
        resolve(answer.startsWith('ok'));
      }
    });
    s.on('error', reject);
  });
}

async function createThroughApi() {
  const res = await elsewhere('POST', '/v1/sandboxes', '{}');
  const body = await res.json();
  check(res.status === 201, 'a sandbox created through the API (' + res.status + ')');
  return body.id;
}

// The terminal's size as its status line says it: [cols, rows].
async function terminalSize(page) {
  const text = await page.getByRole('status', { name: 'terminal status' }).textContent();
  const m = text.match(/(\d+)×(\d+)/);
  return m ? [Number(m[1]), Number(m[2])] : null;
}

// Runs a command in the page's terminal (typed, as a user would) and
// waits for what it prints.
async function typeAndSee(page, command, want, what) {
  await page.keyboard.type(command + '\n');
  await expectSoon(what, () => page.locator('.xterm-rows').filter({ hasText: want }).waitFor());
}

// The sandbox's page: a shell on a PTY through the terminal, in step with
// the terminal's size as the window changes; Back returns to the table.
async function checkTerminal(page, id) {
  await page.getByRole('link', { name: id }).click();
  await expectSoon('the sandbox page opens from its row', () =>
    page.getByRole('heading', { name: id }).waitFor());
  await page.getByRole('button', { name: 'Open terminal' }).click();
  await expectSoon('the terminal\'s shell is running', () =>
    page.getByRole('status', { name: 'terminal status' }).filter({ hasText: 'running' }).waitFor());
  await typeAndSee(page, 'echo hello-$((6*7))', 'hello-42', 'what is typed runs in the sandbox');
  let [cols, rows] = await terminalSize(page);
  await typeAndSee(page, "echo size-$(stty size | tr ' ' x)", `size-${rows}x${cols}`,
    `the PTY is the terminal's size (${cols}×${rows})`);
  await page.setViewportSize({ width: 700, height: 700 });
  await expectSoon('a narrower window makes a narrower terminal', async () => {
    await page.waitForFunction((c) => {
      const m = document.querySelector('[aria-label="terminal status"]').textContent.match(/(\d+)×/);
      return m && Number(m[1]) < c;
    }, cols);
  });
  [cols, rows] = await terminalSize(page);
  await typeAndSee(page, 'echo size-$(stty size | tr \' \' x)', `size-${rows}x${cols}`,
    `the PTY follows the resize (${cols}×${rows})`);
  await step(page, '6-terminal');
  await page.setViewportSize({ width: 1100, height: 700 });
  await page.goBack();
  await expectSoon('Back returns to the live table', () =>
    page.getByRole('status').filter({ hasText: /^live$/ }).waitFor());
}

async function main() {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    page.setDefaultTimeout(30000);
    // What the page logs as errors, and its failed responses; allowed:
    // the ones the current step causes on purpose (the browser's own line
    // for a 401, for the gateway gone), none at other steps.
    const errors = [];
    let allowed = null;
    const unexpected = (text) => !(allowed && allowed.test(text)) && errors.push(text);
    page.on('pageerror', (e) => errors.push('uncaught: ' + e.message));
    page.on('console', (m) => m.type() === 'error' && unexpected(m.text()));
    // The console line of a failed load does not name it: this does.
    page.on('response', (r) => r.status() >= 400 && unexpected(r.status() + ' ' + r.url()));

    await page.goto(process.env.CONSOLE_URL);
    await step(page, '1-sign-in');

    allowed = /401/;
    await page.getByLabel('API key').fill('ak_' + '0'.repeat(64));
    await page.keyboard.press('Enter');
    await expectSoon('a wrong key shows the API\'s message', () =>
      page.getByRole('alert').filter({ hasText: process.env.WRONG_KEY_MESSAGE }).waitFor());
    await step(page, '2-wrong-key');
    allowed = null;

    await page.getByLabel('API key').fill(process.env.API_KEY);
    await page.keyboard.press('Enter');
    await expectSoon('the right key signs in and shows the sandboxes page', () =>
      page.getByRole('heading', { name: 'Sandboxes' }).waitFor());
    await expectSoon('the event stream is live', () =>
      page.getByRole('status').filter({ hasText: 'live' }).waitFor());
    await step(page, '3-signed-in');

    await page.getByRole('button', { name: 'Create sandbox' }).click();
    const running = page.locator('tr:has(td.state.running)');
    await expectSoon('a sandbox created from the page shows up running', () =>
      running.first().waitFor({ timeout: BOOT_MS }));
    const first = await running.first().getAttribute('data-id');
    await step(page, '4-created-from-page');

    const other = await createThroughApi();
    await expectSoon('a sandbox created elsewhere arrives running, live', () =>
      page.locator(`tr[data-id="${other}"] td.state.running`).waitFor({ timeout: BOOT_MS }));
    await step(page, '5-created-elsewhere');

    await checkTerminal(page, first);

    await page.getByRole('button', { name: 'Pause ' + first }).click();
    await expectSoon('Pause makes the row paused', () =>
      page.locator(`tr[data-id="${first}"] td.state.paused`).waitFor({ timeout: BOOT_MS }));
    await page.getByRole('button', { name: 'Resume ' + first }).click();
    await expectSoon('Resume makes it running again', () =>
      page.locator(`tr[data-id="${first}"] td.state.running`).waitFor({ timeout: BOOT_MS }));

    await page.setViewportSize({ width: 360, height: 700 });
    await expectSoon('in a narrow window a row\'s Delete button is still visible', () =>
      page.getByRole('button', { name: 'Delete ' + other }).waitFor({ state: 'visible' }));
    await step(page, '7-narrow');
    await page.setViewportSize({ width: 1100, height: 700 });

    const res = await elsewhere('DELETE', '/v1/sandboxes/' + other);
    check(res.status === 204, 'the other sandbox deleted through the API (' + res.status + ')');
    await expectSoon('its row goes, live', () =>
      page.locator(`tr[data-id="${other}"]`).waitFor({ state: 'detached', timeout: BOOT_MS }));

    // The event stream dropped: the page says so, retries, and is live
    // again once the gateway is back, with the list re-read.
    allowed = /net::ERR_/;
    check(await control('kill gateway'), 'the gateway killed under the open page');
    await expectSoon('the page shows the event stream reconnecting', () =>
      page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor());
    await step(page, '8-stream-dropped');
    check(await control('start gateway'), 'the gateway started again');
    await expectSoon('the event stream is live again', () =>
      page.getByRole('status').filter({ hasText: /^live$/ }).waitFor({ timeout: 60000 }));
    allowed = null;
    await expectSoon('the re-read table still shows the sandbox running', () =>
      page.locator(`tr[data-id="${first}"] td.state.running`).waitFor());

    await page.getByRole('button', { name: 'Delete ' + first }).click();
    await expectSoon('deleting a sandbox from the page removes its row', () =>
      page.locator(`tr[data-id="${first}"]`).waitFor({ state: 'detached', timeout: BOOT_MS }));
    await expectSoon('the table is empty again', () => page.getByText('No sandboxes yet.').waitFor());
    await step(page, '9-deleted');

    // The key revoked while signed in: the next call signs the tab out
    // with the API's refusal.
    allowed = /401/;
    const revoke = await elsewhere('DELETE',
      `/v1/projects/${process.env.PROJECT_ID}/keys/${process.env.KEY_ID}`, undefined,
      process.env.AIRLOCK_ADMIN_KEY);
    check(revoke.status === 204, 'the key revoked through the API (' + revoke.status + ')');
    await page.getByRole('button', { name: 'Create sandbox' }).click();
    await expectSoon('a revoked key signs the tab out with the API\'s refusal', () =>
      page.getByRole('alert').filter({ hasText: 'unauthenticated' }).waitFor());
    await expectSoon('the sign-in form is back', () => page.getByLabel('API key').waitFor());
    await step(page, '10-revoked');

    check(errors.length === 0, 'the page logged no errors (' + errors.join(' | ') + ')');
  } finally {
    await browser.close();
  }
}

main().catch((err) => {
  check(false, 'the browser program: ' + err.stack);
  process.exit(1);
});
