// The web console's Templates page and the sandboxes table's create
// options, checkpoint, fork and stale delete, for test_console.py
// (console_lib.js says the environment). Two sandboxes in all: one of the
// template built here and its fork.
'use strict';
const { BOOT_MS, check, step, expectSoon, elsewhere, signIn, run } = require('./console_lib.js');

const NAME = 'console-tpl';
const RUN = 'echo built-$((6*7)) > /opt/x; echo step-ok';
const MEMORY = '256';

async function api(method, path, body) {
  const res = await elsewhere(method, path, body === undefined ? undefined : JSON.stringify(body));
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

// Holds the page's requests whose path ends with `suffix` until release():
// the page is seen as it is while a call is under way, without timing it.
async function hold(page, suffix) {
  const held = [];
  const matches = (url) => url.pathname.endsWith(suffix);
  await page.route(matches, (route) => held.push(route));
  return async () => {
    await page.unroute(matches);
    for (const route of held) await route.continue().catch(() => {}); // gone with its page
  };
}

const row = (page, id) => page.locator(`tr[data-id="${id}"]`);

// Build template is pressed with the keyboard: clicked below the fold,
// chromium scrolled the page back as the button took focus, between the
// mouse's down and up (the click then landed beside it and submitted
// nothing).
const build = (page) => page.getByRole('button', { name: 'Build template' }).press('Enter');

// A spec the API refuses (a relative file path) shows its 400 naming the
// field; the path made absolute, the build streams its log, and the new
// template is listed and has its page.
async function buildTemplate(page, t) {
  await page.getByRole('link', { name: 'Templates' }).click();
  await expectSoon('the Templates page lists none yet', () => page.getByText('No templates yet.').waitFor());
  await page.getByLabel('Name', { exact: true }).fill(NAME);
  await page.getByRole('button', { name: 'Add file' }).click();
  await page.getByLabel('File 1 path').fill('opt/greeting');
  await page.getByLabel('File 1 content').fill('hello\n');
  await page.getByLabel(/^Run commands/).fill(RUN);
  await page.getByLabel('Memory (MiB)').fill(MEMORY);
  await step(page, '1-build-form');

  t.allow(/400/);
  await build(page);
  await expectSoon('a bad spec shows the API\'s 400 naming the field', () =>
    page.getByRole('alert').filter({ hasText: /invalid_argument.*files\[0\]\.path/ }).waitFor());
  await step(page, '2-bad-spec');

  // The JSON editor: an example to start from; what is typed is sent as
  // it is, so JSON the API cannot read is its 400 too.
  await page.getByLabel('As JSON').check();
  const json = page.getByLabel(/^Spec \(JSON/);
  check((await json.inputValue()).includes('"run"'), 'the JSON editor starts with an example spec');
  await json.fill('{"name":');
  await build(page);
  await expectSoon('JSON the API cannot read shows its 400', () =>
    page.getByRole('alert').filter({ hasText: 'not valid JSON' }).waitFor());
  await step(page, '3-bad-json');
  t.allow(null);
  await page.getByLabel('In a form').check();

  await page.getByLabel('File 1 path').fill('/opt/greeting');
  await build(page);
  await expectSoon('the build shows it is running, its button disabled', async () => {
    await page.getByRole('status').filter({ hasText: /Building… \d+:\d\d/ }).waitFor();
    await page.locator('button:disabled', { hasText: 'Build template' }).waitFor();
  });
  const log = page.getByRole('log', { name: 'Build log' });
  await expectSoon('the run command\'s output arrives in the log', () =>
    log.filter({ hasText: '| step-ok' }).waitFor({ timeout: BOOT_MS }));
  const status = await page.locator('.build-status').textContent();
  check(status.startsWith('Building'), 'the log line came while the build still ran (' + status + ')');
  await step(page, '4-building');
  await expectSoon('the build ends with a link to the template', () =>
    page.getByRole('link', { name: NAME + ':1' }).waitFor({ timeout: BOOT_MS }));
  await expectSoon('the list is re-read and shows it',
    () => page.locator(`tr[data-name="${NAME}"]`).waitFor());
  check(await page.getByRole('button', { name: 'Build template' }).isEnabled(),
    'the button is enabled again');
  await step(page, '5-built');

  await page.getByRole('link', { name: NAME + ':1' }).click();
  await expectSoon('the template\'s page shows its spec and version', async () => {
    await page.getByRole('heading', { name: NAME }).waitFor();
    await page.getByText(RUN).waitFor();
    await page.getByText('/opt/greeting').waitFor();
    await page.getByRole('link', { name: NAME + ':1' }).waitFor();
  });
  await step(page, '6-template-page');
  await page.getByRole('table').getByRole('link', { name: NAME + ':1' }).click();
  await expectSoon('a version has its own page', async () => {
    await page.getByRole('heading', { name: NAME + ':1' }).waitFor();
    await page.getByRole('button', { name: 'Delete ' + NAME + ':1' }).waitFor();
  });
  await page.goBack();
  await page.getByRole('heading', { name: NAME, exact: true }).waitFor();
  await page.setViewportSize({ width: 360, height: 700 });
  await step(page, '7-template-page-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });
}

// A size the API refuses shows its error; the template's own size makes
// a sandbox of it, which holds what the build's run command wrote.
async function createFromTemplate(page, t) {
  await page.getByRole('link', { name: 'Sandboxes' }).click();
  await page.getByLabel('Template', { exact: true }).fill(NAME);
  await page.getByText('More options').click();
  await page.getByLabel('vCPUs').fill('99');
  await page.getByLabel('Memory (MiB)').fill(MEMORY);
  t.allow(/400/);
  await page.getByRole('button', { name: 'Create sandbox' }).click();
  await expectSoon('a bad size shows the API\'s error', () =>
    page.getByRole('alert').filter({ hasText: 'cpus: 99 is more than 16' }).waitFor());
  await step(page, '8-bad-size');
  t.allow(null);
  await page.setViewportSize({ width: 360, height: 900 });
  await step(page, '9-create-options-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });

  await page.getByLabel('vCPUs').fill('1');
  await page.getByRole('button', { name: 'Create sandbox' }).click();
  const running = page.locator('tr:has(td.state.running)');
  await expectSoon('a sandbox of the template shows up running', () =>
    running.first().waitFor({ timeout: BOOT_MS }));
  const id = await running.first().getAttribute('data-id');
  const got = await api('GET', '/v1/sandboxes/' + id);
  check(got.body.cpus === 1 && got.body.memory_mb === Number(MEMORY) && got.body.template === NAME + ':1',
    'it has the template and the size chosen (' + JSON.stringify([got.body.template, got.body.cpus, got.body.memory_mb]) + ')');
  const x = await api('POST', `/v1/sandboxes/${id}/exec`, { cmd: ['cat', '/opt/x'] });
  check(x.status === 200 && x.body.stdout === 'built-42\n', 'it holds what the build wrote (' + JSON.stringify(x.body) + ')');
  await step(page, '10-created');
  return id;
}

// A refused checkpoint name leaves no progress behind; a good one is made.
async function checkpoint(page, t, id) {
  const ask = async (name) => {
    await page.getByRole('button', { name: 'Checkpoint ' + id }).click();
    await page.getByLabel('Checkpoint name for ' + id).fill(name);
    await page.getByRole('button', { name: 'Save checkpoint of ' + id }).click();
  };
  t.allow(/400/);
  await ask('Not A Name');
  await expectSoon('a refused checkpoint shows the API\'s 400', () =>
    page.getByRole('alert').filter({ hasText: 'invalid_argument' }).waitFor());
  await expectSoon('and leaves no progress behind: the row\'s buttons work again', () =>
    row(page, id).locator('button:enabled', { hasText: 'Checkpoint' }).waitFor());
  t.allow(null);
  await ask('cp1');
  await expectSoon('the row says the checkpoint was made', () =>
    row(page, id).getByRole('status').filter({ hasText: 'Checkpoint cp1 (disk) made' }).waitFor({ timeout: BOOT_MS }));
  const cps = await api('GET', `/v1/sandboxes/${id}/checkpoints`);
  check(cps.body.checkpoints.some((c) => c.name === 'cp1'), 'the API lists it (' + JSON.stringify(cps.body) + ')');
  await step(page, '11-checkpointed');
}

// Fork shows its progress while the call runs; the fork's row arrives.
async function fork(page, id) {
  const release = await hold(page, `/v1/sandboxes/${id}/fork`);
  await page.getByRole('button', { name: 'Fork ' + id }).click();
  await expectSoon('the row says Forking… with its buttons disabled', async () => {
    await row(page, id).getByRole('status').filter({ hasText: 'Forking…' }).waitFor();
    await row(page, id).locator('button:disabled', { hasText: 'Fork' }).waitFor();
  });
  await step(page, '12-forking');
  await release();
  const forked = page.locator(`tr:not([data-id="${id}"]):has(td.state.running)`);
  await expectSoon('the fork\'s row arrives running', () => forked.waitFor({ timeout: BOOT_MS }));
  await step(page, '13-forked');
  return forked.getAttribute('data-id');
}

// Deleted in another tab while this one misses the event (its stream
// held): the row stays until Delete, which shows the API's 404 plainly and
// re-reads the list, so the row goes.
async function staleDelete(page, t, id) {
  const release = await hold(page, '/v1/events');
  await page.getByRole('link', { name: 'Templates' }).click();
  await page.getByRole('link', { name: 'Sandboxes' }).click();
  await row(page, id).waitFor();
  const gone = await api('DELETE', '/v1/sandboxes/' + id);
  check(gone.status === 204, 'the fork deleted through the API (' + gone.status + ')');
  check(await row(page, id).isVisible(), 'a page that missed the event still shows its row');
  t.allow(/404/);
  await page.getByRole('button', { name: 'Delete ' + id }).click();
  await expectSoon('Delete on it shows the API\'s 404', () =>
    page.getByRole('alert').filter({ hasText: new RegExp('not_found.*' + id) }).waitFor());
  await expectSoon('and the re-read list no longer has it', () =>
    row(page, id).waitFor({ state: 'detached' }));
  await step(page, '14-stale-delete');
  t.allow(null);
  await release();
  await expectSoon('the event stream is live again', () =>
    page.getByRole('status').filter({ hasText: /^live$/ }).waitFor());
}

run(async (page, t) => {
  await signIn(page);
  await buildTemplate(page, t);
  const id = await createFromTemplate(page, t);
  await checkpoint(page, t, id);
  const forkId = await fork(page, id);
  await staleDelete(page, t, forkId);

  await page.getByRole('button', { name: 'Delete ' + id }).click();
  await expectSoon('the sandbox deleted from the page loses its row', () =>
    row(page, id).waitFor({ state: 'detached', timeout: BOOT_MS }));
  await page.getByRole('link', { name: 'Templates' }).click();
  await page.getByRole('link', { name: NAME, exact: true }).click();
  await page.getByRole('button', { name: 'Delete ' + NAME }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expectSoon('the template deleted from its page is gone from the list', () =>
    page.getByText('No templates yet.').waitFor());
  await step(page, '15-deleted');
});
