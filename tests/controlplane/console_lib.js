// What the console's browser programs share (test_console.py runs each):
// checks printed as "ok   …" / "FAIL …" lines, screenshots, calls made
// outside the page, cp_harness's control socket, and a signed-in page in
// Debian's chromium (headless, playwright-core) whose errors are tracked.
// env: PLAYWRIGHT (the package's path), CHROMIUM, CONSOLE_URL, API_KEY (a
// project key of the program's own), SCREENSHOTS (a directory), and
// cp_harness's AIRLOCK_ADMIN_KEY and AIRLOCK_TEST_CONTROL.
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

// Waits for fn (a locator's wait or assertion) and records whether it came.
async function expectSoon(what, fn) {
  try {
    await fn();
    check(true, what);
  } catch (err) {
    check(false, what + ' (' + err.message.split('\n')[0] + ')');
  }
}

// A call made elsewhere (another tab, a script) while the page is open.
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

// Signs the page in with key and waits for the start page.
async function signIn(page, key = process.env.API_KEY) {
  await page.goto(process.env.CONSOLE_URL);
  await page.getByLabel('API key').fill(key);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
}

// Runs body(page, t) on a fresh page in chromium and then checks that the
// page logged no errors and got no failed response but those a step
// causes on purpose: t.allow(/regexp/) while it does, t.allow(null) after.
// t.newPage(options) opens another page in a context of its own (its own
// sessionStorage: another sign-in), watched the same way.
async function run(body) {
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true });
  const errors = [];
  let allowed = null;
  const unexpected = (text) => !(allowed && allowed.test(text)) && errors.push(text);
  async function newPage(options = {}) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 }, ...options });
    const page = await context.newPage();
    page.setDefaultTimeout(30000);
    page.on('pageerror', (e) => errors.push('uncaught: ' + e.message));
    page.on('console', (m) => m.type() === 'error' && unexpected(m.text()));
    // The console line of a failed load does not name it: this does.
    page.on('response', (r) => r.status() >= 400 && unexpected(r.status() + ' ' + r.url()));
    return page;
  }
  try {
    await body(await newPage(), { allow: (re) => (allowed = re), newPage });
    check(errors.length === 0, 'the page logged no errors (' + errors.join(' | ') + ')');
  } catch (err) {
    check(false, 'the browser program: ' + err.stack);
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}

module.exports = { BOOT_MS, check, step, expectSoon, elsewhere, control, signIn, run };
