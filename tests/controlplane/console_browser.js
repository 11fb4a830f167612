// The web console's sandboxes table and terminal, for test_console.py
// (console_lib.js says the environment). Also: KEY_ID and PROJECT_ID (the
// key's, to revoke it at the end), WRONG_KEY_MESSAGE (the API's refusal
// of a wrong key).
'use strict';
const { BOOT_MS, check, step, expectSoon, elsewhere, control, run } = require('./console_lib.js');

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

run(async (page, t) => {
  await page.goto(process.env.CONSOLE_URL);
  await step(page, '1-sign-in');

  t.allow(/401/);
  await page.getByLabel('API key').fill('ak_' + '0'.repeat(64));
  await page.keyboard.press('Enter');
  await expectSoon('a wrong key shows the API\'s message', () =>
    page.getByRole('alert').filter({ hasText: process.env.WRONG_KEY_MESSAGE }).waitFor());
  await step(page, '2-wrong-key');
  t.allow(null);

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
  t.allow(/net::ERR_/);
  check(await control('kill gateway'), 'the gateway killed under the open page');
  await expectSoon('the page shows the event stream reconnecting', () =>
    page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor());
  await step(page, '8-stream-dropped');
  check(await control('start gateway'), 'the gateway started again');
  await expectSoon('the event stream is live again', () =>
    page.getByRole('status').filter({ hasText: /^live$/ }).waitFor({ timeout: 60000 }));
  t.allow(null);
  await expectSoon('the re-read table still shows the sandbox running', () =>
    page.locator(`tr[data-id="${first}"] td.state.running`).waitFor());

  await page.getByRole('button', { name: 'Delete ' + first }).click();
  await expectSoon('deleting a sandbox from the page removes its row', () =>
    page.locator(`tr[data-id="${first}"]`).waitFor({ state: 'detached', timeout: BOOT_MS }));
  await expectSoon('the table is empty again', () => page.getByText('No sandboxes yet.').waitFor());
  await step(page, '9-deleted');

  // The key revoked while signed in: the next call signs the tab out
  // with the API's refusal.
  t.allow(/401/);
  const revoke = await elsewhere('DELETE',
    `/v1/projects/${process.env.PROJECT_ID}/keys/${process.env.KEY_ID}`, undefined,
    process.env.AIRLOCK_ADMIN_KEY);
  check(revoke.status === 204, 'the key revoked through the API (' + revoke.status + ')');
  await page.getByRole('button', { name: 'Create sandbox' }).click();
  await expectSoon('a revoked key signs the tab out with the API\'s refusal', () =>
    page.getByRole('alert').filter({ hasText: 'unauthenticated' }).waitFor());
  await expectSoon('the sign-in form is back', () => page.getByLabel('API key').waitFor());
  await step(page, '10-revoked');
});
