// The web console's page of one sandbox, for test_console.py
// (console_lib.js says the environment): its facts kept live, its tabs
// by keyboard, files
// (upload and download of bytes that are not UTF-8, a directory made and
// entered, a missing path's 404), processes and their output, the
// network and console logs, ports, the terminal refusing while the
// sandbox is paused and carrying on once resumed, checkpoints and a fork
// (deleted under its open page: the API's 404), and Delete. Two sandbox
// creates: the sandbox and its fork.
'use strict';
const fs = require('fs');
const { BOOT_MS, check, step, expectSoon, elsewhere, signIn, run } = require('./console_lib.js');

// Bytes that are not UTF-8 (every byte value, in a scrambled order).
const PAYLOAD = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256));

async function api(method, path, body) {
  const res = await elsewhere(method, path, body === undefined ? undefined : JSON.stringify(body));
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function openTab(page, name) {
  await page.getByRole('tab', { name }).click();
  return page.getByRole('tabpanel', { name });
}

// Clicks panel's Refresh until what is wanted shows (a log written a
// moment after the command that caused it returned).
async function refreshUntil(panel, locator) {
  for (let i = 0; i < 60; i++) {
    if (await locator.count()) return;
    await panel.getByRole('button', { name: 'Refresh' }).click();
    await panel.page().waitForTimeout(500);
  }
  await locator.first().waitFor({ timeout: 1 });
}

async function startProcess(panel, cmd) {
  await panel.getByLabel('Command').fill(cmd);
  await panel.getByRole('button', { name: 'Start' }).click();
}

async function checkFiles(page, t) {
  // The tab list by keyboard: Right from the selected tab selects the next.
  await page.getByRole('tab', { name: 'Terminal' }).focus();
  await page.keyboard.press('ArrowRight');
  await expectSoon('Right arrow selects the next tab and focuses it', () =>
    page.locator('[role="tab"][aria-selected="true"]:focus', { hasText: 'Files' }).waitFor());
  const files = page.getByRole('tabpanel', { name: 'Files' });
  await expectSoon('the Files panel lists /', () =>
    files.getByRole('button', { name: 'tmp/' }).waitFor());
  await files.getByRole('button', { name: 'tmp/' }).click();
  await files.getByLabel('Upload files').setInputFiles({
    name: 'bytes.bin', mimeType: 'application/octet-stream', buffer: PAYLOAD });
  const row = files.locator('tr[data-name="bytes.bin"]');
  await expectSoon('an uploaded file is listed in /tmp with its size', () =>
    row.filter({ hasText: '4.0 KiB' }).waitFor());
  await step(page, '2-files-uploaded');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    files.getByRole('button', { name: 'Download bytes.bin' }).click(),
  ]);
  const got = fs.readFileSync(await download.path());
  check(download.suggestedFilename() === 'bytes.bin' && Buffer.compare(got, PAYLOAD) === 0,
    `the download is the uploaded bytes (${download.suggestedFilename()}, ${got.length} bytes)`);

  await files.getByPlaceholder('new directory').fill('made-here');
  await files.getByRole('button', { name: 'Make directory' }).click();
  await files.getByRole('button', { name: 'made-here/' }).click();
  await expectSoon('a directory made from the page opens, empty', async () => {
    await files.locator('[aria-current="location"]', { hasText: 'made-here' }).waitFor();
    await files.getByText('This directory is empty.').waitFor();
  });
  check(await files.getByLabel('Path').inputValue() === '/tmp/made-here',
    'the path field follows the directory');

  t.allow(/404/);
  await files.getByLabel('Path').fill('/no/such/dir');
  await files.getByRole('button', { name: 'Go' }).click();
  await expectSoon('a missing path shows the API\'s 404', () =>
    files.getByRole('alert').filter({ hasText: 'not_found' }).waitFor());
  await step(page, '3-files-missing-path');
  t.allow(null);
  await files.getByRole('navigation', { name: 'Directory' }).getByRole('button', { name: '/', exact: true }).click();
  await expectSoon('the breadcrumb goes up (and the error goes)', () =>
    files.getByRole('alert').waitFor({ state: 'detached' }));
}

async function checkProcesses(page) {
  const procs = await openTab(page, 'Processes');
  await startProcess(procs, 'echo out-$((6*7)); sleep 1; echo done');
  const output = procs.getByRole('log');
  await expectSoon('a background process\'s output is shown', () =>
    output.filter({ hasText: 'out-42' }).waitFor());
  await expectSoon('and its exit', async () => {
    await output.filter({ hasText: 'done' }).waitFor();
    await procs.getByRole('status', { name: 'process status' }).filter({ hasText: 'exited with code 0' }).waitFor();
  });
  await expectSoon('the list shows it exited', () =>
    procs.locator('tr', { hasText: 'out-$((6*7))' }).filter({ hasText: 'exited with code 0' }).waitFor());
  await step(page, '4-processes');
  // For the logs and ports: a DNS question egress denies, a line on the
  // console, a server on port 8000.
  await startProcess(procs, 'getent hosts console.example.test; echo console-says-$((6*7)) > /dev/console');
  await expectSoon('the second process exits', () =>
    procs.locator('tr', { hasText: 'console.example.test' }).filter({ hasText: 'exited' }).waitFor());
  await startProcess(procs, 'exec python3 -m http.server 8000 --directory /tmp');
  const server = procs.locator('tr', { hasText: 'http.server' });
  await expectSoon('a server process runs, with signal buttons', () =>
    server.getByRole('button', { name: /^TERM / }).waitFor());
}

async function checkLogs(page) {
  const net = await openTab(page, 'Network log');
  const denied = net.locator('tr', { hasText: 'console.example.test' });
  await expectSoon('the network log shows the denied DNS question', async () => {
    await refreshUntil(net, denied);
    await denied.filter({ hasText: 'deny' }).first().waitFor();
  });
  await step(page, '5-network-log');

  const con = await openTab(page, 'Console log');
  const log = con.getByRole('log', { name: 'console log' });
  // A sandbox restored from its template's snapshot never booted a
  // kernel of its own: its console starts with guestd's lines.
  await expectSoon('the console log shows the guest\'s own lines', () =>
    log.filter({ hasText: 'svc=guestd' }).waitFor());
  await expectSoon('and what was written to /dev/console', async () => {
    await refreshUntil(con, log.filter({ hasText: 'console-says-42' }));
  });
  await step(page, '6-console-log');
}

async function checkPorts(page) {
  const ports = await openTab(page, 'Ports');
  const row = ports.locator('tr[data-port="8000"]');
  await expectSoon('the server\'s port is listed', () => refreshUntil(ports, row));
  await row.getByRole('button', { name: 'Link to port 8000' }).click();
  const link = row.getByRole('link');
  await expectSoon('its signed link is shown', () => link.waitFor());
  const href = (await link.getAttribute('href')) || '';
  check(/^http:\/\/8000-sb_[^/]*\/\?airlock_expires=\d+&airlock_signature=[0-9a-f]+$/.test(href),
    'the link is the port\'s signed URL (' + href + ')');
  // Chromium takes *.localhost for this machine: the link opens the
  // server in the sandbox (its listing of /tmp) in a new tab.
  const [tab] = await Promise.all([page.waitForEvent('popup'), link.click()]);
  await expectSoon('the link opens the sandbox\'s server', () =>
    tab.getByRole('link', { name: 'bytes.bin' }).waitFor());
  await tab.close();
  await step(page, '7-ports');
}

// The terminal runs; paused elsewhere, the page shows it at once and the
// terminal refuses with the API's message, and carries on once resumed
// from the page; opened while paused, it shows the start's refusal and
// starts once resumed.
async function checkTerminal(page, t, id) {
  const term = await openTab(page, 'Terminal');
  const status = term.getByRole('status', { name: 'terminal status' });
  const screen = term.locator('.xterm-rows');
  await term.getByRole('button', { name: 'Open terminal' }).click();
  await expectSoon('the terminal\'s shell runs', () => status.filter({ hasText: 'running' }).waitFor());
  await page.keyboard.type('echo hello-$((6*7))\n');
  await expectSoon('what is typed runs', () => screen.filter({ hasText: 'hello-42' }).waitFor());

  t.allow(/409/);
  check((await api('POST', `/v1/sandboxes/${id}/pause`)).status === 200, 'paused through the API');
  await expectSoon('the page shows the pause live', () => page.locator('dd.state.paused').waitFor());
  await expectSoon('the terminal says why it cannot run', () =>
    term.getByText('The sandbox is paused').waitFor());
  // The terminal kept the keyboard's focus.
  await page.keyboard.type('x');
  await expectSoon('typing into it shows the API\'s 409', () =>
    term.getByRole('alert').filter({ hasText: `conflict: sandbox ${id} is paused` }).waitFor());
  await step(page, '8-terminal-paused');
  await term.getByRole('button', { name: 'Resume sandbox' }).click();
  await expectSoon('Resume from the page makes it running', () =>
    page.locator('dd.state.running').waitFor({ timeout: BOOT_MS }));
  await term.locator('.xterm-screen').click();
  await page.keyboard.type('echo back-$((6*7))\n');
  await expectSoon('the same shell carries on', () => screen.filter({ hasText: 'back-42' }).waitFor());

  // A suspend ends the output stream (its QEMU goes): resumed, the
  // terminal attaches again and the ring replays the screen.
  const suspend = await api('POST', `/v1/sandboxes/${id}/suspend`);
  check(suspend.status === 200, 'suspended through the API (' + suspend.status + ')');
  await expectSoon('the page shows it suspended', () =>
    page.locator('dd.state.suspended').waitFor({ timeout: BOOT_MS }));
  await step(page, '8b-terminal-suspended');
  await term.getByRole('button', { name: 'Resume sandbox' }).click();
  await expectSoon('resumed, the terminal is attached again with its screen', async () => {
    await status.filter({ hasText: 'running' }).waitFor({ timeout: BOOT_MS });
    await screen.filter({ hasText: 'back-42' }).waitFor();
  });
  await term.locator('.xterm-screen').click();
  await page.keyboard.type('echo woke-$((6*7))\n');
  await expectSoon('and the shell runs what is typed', () => screen.filter({ hasText: 'woke-42' }).waitFor());

  check((await api('POST', `/v1/sandboxes/${id}/pause`)).status === 200, 'paused again');
  await page.locator('dd.state.paused').waitFor();
  await term.getByRole('button', { name: 'Close terminal' }).click();
  await term.getByRole('button', { name: 'Open terminal' }).click();
  await expectSoon('a terminal opened while paused shows the start\'s 409', () =>
    term.getByRole('alert').filter({ hasText: 'starting a process needs running' }).waitFor());
  await step(page, '9-terminal-refused');
  t.allow(null);
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await expectSoon('resumed, it starts', () => status.filter({ hasText: 'running' }).waitFor({ timeout: BOOT_MS }));
  await page.keyboard.type('echo again-$((6*7))\n');
  await expectSoon('and runs what is typed', () => screen.filter({ hasText: 'again-42' }).waitFor());
  await step(page, '10-terminal-resumed');
}

// A checkpoint, then a fork whose page, deleted through the API while
// open, shows the API's 404.
async function checkCheckpoints(page, t, id) {
  const cps = await openTab(page, 'Checkpoints');
  await cps.getByLabel('Name').fill('first');
  await cps.getByRole('button', { name: 'Create checkpoint' }).click();
  await expectSoon('a checkpoint made from the page is listed', () =>
    cps.locator('tr[data-name="first"]').waitFor({ timeout: BOOT_MS }));
  await cps.getByRole('button', { name: 'Fork the running sandbox' }).click();
  await expectSoon('a fork shows as a link', () =>
    cps.locator('.forks a').waitFor({ timeout: BOOT_MS }));
  await step(page, '11-checkpoints');
  const fork = (await cps.locator('.forks a').textContent()).trim();
  const got = await api('GET', '/v1/sandboxes/' + fork);
  check(got.status === 200 && got.body.state === 'running' && fork !== id,
    `the fork is a running sandbox (${got.status} ${got.body && got.body.state})`);

  await cps.locator('.forks a').click();
  await expectSoon('its link opens the fork\'s page', () =>
    page.getByRole('heading', { name: fork }).waitFor());
  await page.locator('dd.state.running').waitFor();
  t.allow(/404/);
  check((await api('DELETE', '/v1/sandboxes/' + fork)).status === 204, 'the fork deleted through the API');
  await expectSoon('its open page shows the API\'s 404', () =>
    page.getByRole('alert').filter({ hasText: `not_found` }).filter({ hasText: fork }).waitFor());
  await step(page, '12-fork-deleted');
  t.allow(null);
  await page.goBack();
  await page.getByRole('heading', { name: id }).waitFor();
}

run(async (page, t) => {
  page.on('dialog', (d) => d.accept());
  const made = await api('POST', '/v1/sandboxes', {});
  check(made.status === 201 && made.body.state === 'running',
    `a sandbox created through the API (${made.status})`);
  const id = made.body.id;
  await signIn(page);
  await page.getByRole('link', { name: id }).click();
  await expectSoon('its page shows it running, live', async () => {
    await page.locator('dd.state.running').waitFor();
    await page.getByRole('status', { name: 'event stream' }).filter({ hasText: 'live' }).waitFor();
  });
  await step(page, '1-sandbox');

  await checkFiles(page, t);
  await checkProcesses(page);
  await checkLogs(page);
  await checkPorts(page);
  await checkTerminal(page, t, id);
  await checkCheckpoints(page, t, id);

  await page.setViewportSize({ width: 360, height: 700 });
  await openTab(page, 'Files');
  await expectSoon('in a narrow window the Files panel still shows its rows\' buttons', () =>
    page.getByRole('button', { name: 'Delete tmp' }).waitFor({ state: 'visible' }));
  await step(page, '13-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });

  await page.getByRole('button', { name: 'Delete', exact: true }).click();
  await expectSoon('Delete returns to the list, without it', async () => {
    await page.getByRole('heading', { name: 'Sandboxes' }).waitFor();
    await page.getByText('No sandboxes yet.').waitFor({ timeout: BOOT_MS });
  });
  const after = await api('GET', '/v1/sandboxes/' + id);
  check(after.status === 404, 'the sandbox is gone (' + after.status + ')');
});
