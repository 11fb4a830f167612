// The web console's Secrets, Audit log and (admin) Projects pages, for
// test_console.py (console_lib.js says the environment; also KEY_ID, the
// project key's id). As the project key: a secret created from the form
// is listed with its binding and rate limit and its value is nowhere in
// the page, a bad host shows the API's 400, Unlock the API's 409 (the
// project is not BYOK), Delete removes it, the audit log shows both and
// narrows by action and sandbox, and the admin pages say they need the
// admin key. Signed in as the admin key in a context of its own: a
// project created, a key created (its secret shown once, working,
// copied), a quota set and read back, a bad one refused as the API says,
// the key revoked and refused by the API, an org's secrets and audit
// log. No sandbox is made.
'use strict';
const crypto = require('crypto');
const { check, step, expectSoon, elsewhere, signIn, run } = require('./console_lib.js');

const ADMIN = process.env.AIRLOCK_ADMIN_KEY;
const VALUE = 'console-value-' + crypto.randomBytes(8).toString('hex');
const BAD_HOST = {
  name: 'bad',
  value: 'x',
  bindings: [{ host: 'http://x', header: 'Authorization', format: 'Bearer {secret}' }],
};

// What the API itself answers a request the page is about to make.
async function apiAnswer(method, path, body, key) {
  const res = await elsewhere(method, path, JSON.stringify(body), key);
  return { status: res.status, body: await res.json() };
}

async function fillSecret(page, name, value, host) {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Value', { exact: true }).fill(value);
  await page.getByLabel('Host 1', { exact: true }).fill(host);
}

async function checkSecrets(page, t) {
  await page.getByRole('navigation').getByRole('link', { name: 'Secrets' }).click();
  await expectSoon('the secrets page opens with no secrets', () => page.getByText('No secrets yet.').waitFor());
  await fillSecret(page, 'github', VALUE, 'api.github.com');
  await page.getByLabel('Rate limit per minute').fill('60');
  await page.getByLabel('Burst').fill('10');
  await page.getByRole('button', { name: 'Create secret' }).click();
  const row = page.locator('tr[data-name="github"]');
  await expectSoon('the secret is listed with its binding and rate limit', () =>
    row.filter({ hasText: 'api.github.com' }).filter({ hasText: 'Authorization: Bearer {secret}' })
      .filter({ hasText: '60/min, burst 10' }).waitFor());
  check(!(await page.content()).includes(VALUE), "the page's HTML never holds the value");
  check((await page.getByLabel('Value', { exact: true }).inputValue()) === '',
    'the value field is empty after the create');
  const listed = (await apiAnswer('GET', '/v1/secrets')).body.secrets;
  check(listed.length === 1 && listed[0].rate_limit.per_minute === 60 && listed[0].rate_limit.burst === 10,
    'the API has the secret with its limit (' + JSON.stringify(listed) + ')');
  await step(page, '1-secret-created');

  const refusal = await apiAnswer('POST', '/v1/secrets', BAD_HOST);
  check(refusal.status === 400 && refusal.body.error.message.startsWith('bindings[0].host'),
    'the API refuses the host http://x naming the field (' + JSON.stringify(refusal) + ')');
  t.allow(/400 .*\/v1\/secrets$|status of 400/);
  await fillSecret(page, BAD_HOST.name, BAD_HOST.value, BAD_HOST.bindings[0].host);
  await page.getByRole('button', { name: 'Create secret' }).click();
  await expectSoon("the form shows the API's 400 naming the field", () =>
    page.getByRole('alert').filter({ hasText: 'invalid_argument: ' + refusal.body.error.message }).waitFor());
  t.allow(null);
  check(await page.getByLabel('Host 1', { exact: true }).evaluate(
    (e) => e.getAttribute('aria-invalid') === 'true' && document.activeElement === e),
  'the field it names is marked invalid and focused');
  await step(page, '2-bad-host');

  await checkUnlock(page, t);

  await page.setViewportSize({ width: 360, height: 700 });
  await expectSoon("in a narrow window the row's Delete button is visible", () =>
    page.getByRole('button', { name: 'Delete github' }).waitFor({ state: 'visible' }));
  await step(page, '3-secrets-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });

  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: 'Delete github' }).click();
  await expectSoon('Delete, confirmed, removes the row', () => row.waitFor({ state: 'detached' }));
  check((await apiAnswer('GET', '/v1/secrets')).body.secrets.length === 0, 'the API has no secret left');
}

// The project keeps its secrets under vault's master key: Unlock gets the
// API's 409 as it says it, and the customer key leaves the field.
async function checkUnlock(page, t) {
  const body = { customer_key: crypto.randomBytes(32).toString('hex'), ttl_seconds: 3600 };
  const refusal = await apiAnswer('POST', '/v1/secrets/unlock', body);
  check(refusal.status === 409, 'the API refuses to unlock a master-key project (' + JSON.stringify(refusal) + ')');
  await page.getByText('BYOK: unlock or lock the project').click();
  await page.getByLabel('Customer key', { exact: true }).fill(body.customer_key);
  t.allow(/409 .*\/unlock$|status of 409/);
  await page.getByRole('button', { name: 'Unlock', exact: true }).click();
  await expectSoon("Unlock shows the API's 409", () =>
    page.getByRole('alert').filter({ hasText: 'conflict: ' + refusal.body.error.message }).waitFor());
  t.allow(null);
  check((await page.getByLabel('Customer key', { exact: true }).inputValue()) === '',
    'the customer key field is empty after Unlock');
  await page.getByRole('button', { name: 'Lock', exact: true }).click();
  await expectSoon('Lock says the project is locked', () =>
    page.getByRole('status').filter({ hasText: /^Locked$/ }).waitFor());
}

async function checkAudit(page) {
  await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
  const rows = page.locator('table.audit tbody tr');
  await expectSoon("the audit log shows the key's create and delete", async () => {
    await rows.filter({ hasText: 'create_secret' }).filter({ hasText: process.env.KEY_ID }).waitFor();
    await rows.filter({ hasText: 'delete_secret' }).filter({ hasText: process.env.KEY_ID }).waitFor();
  });
  await step(page, '4-audit');
  await page.getByLabel('Action', { exact: true }).selectOption('delete_secret');
  await expectSoon('the action filter narrows the log to the delete', async () => {
    await rows.filter({ hasText: 'create_secret' }).first().waitFor({ state: 'detached' });
    await page.waitForFunction(() => {
      const actions = [...document.querySelectorAll('table.audit tbody tr')].map((r) => r.dataset.action);
      return actions.length === 1 && actions[0] === 'delete_secret';
    });
  });
  await step(page, '5-audit-filtered');
  await page.getByLabel('Action', { exact: true }).selectOption('');
  await page.getByLabel('Sandbox id').fill('sb_none');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expectSoon("the sandbox filter asks the API for that sandbox's rows: none", () =>
    page.getByText('No entries.').waitFor());
  await page.getByLabel('Sandbox id').fill('');
  await page.getByRole('button', { name: 'Filter' }).click();
  await rows.filter({ hasText: 'delete_secret' }).waitFor();
  const made = await elsewhere('POST', '/v1/secrets', JSON.stringify({
    name: 'later', value: 'v', bindings: [{ host: 'example.com', header: 'X-Token' }] }));
  check(made.status === 201, 'another secret created through the API (' + made.status + ')');
  await page.getByRole('button', { name: 'Refresh' }).click();
  await expectSoon('Refresh shows its create', () =>
    rows.filter({ hasText: 'create_secret' }).nth(1).waitFor());
}

async function checkNoAdminPages(page) {
  await page.goto(new URL('projects', process.env.CONSOLE_URL).href);
  await expectSoon('/console/projects says it needs the admin key', () =>
    page.getByRole('alert').filter({ hasText: 'needs the admin key' }).waitFor());
  check((await page.getByRole('navigation').getByRole('link', { name: 'Projects' }).count()) === 0,
    'the nav has no Projects for a project key');
  await step(page, '6-projects-needs-admin');
}

// Creates a key on the open project's page; its secret as the page shows it.
async function createKey(page) {
  await page.getByLabel('Key name').fill('ci');
  await page.getByRole('button', { name: 'Create key' }).click();
  const shown = page.getByLabel('new key secret');
  await expectSoon('the new key is shown, with its warning', async () => {
    await shown.waitFor();
    await page.getByText('shown this once').waitFor();
  });
  const key = await shown.textContent();
  const res = await elsewhere('GET', '/v1/sandboxes', undefined, key);
  check(/^ak_[0-9a-f]{64}$/.test(key) && res.status === 200, 'the key shown works (' + res.status + ')');
  await page.getByRole('button', { name: 'Copy' }).click();
  await expectSoon('Copy puts it on the clipboard', async () => {
    await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor();
    if ((await page.evaluate(() => navigator.clipboard.readText())) !== key) throw new Error('clipboard differs');
  });
  await step(page, '8-new-key');
  await page.getByRole('button', { name: 'Done' }).click();
  check(!(await page.content()).includes(key), 'Done takes the key off the page');
  return key;
}

async function checkQuotas(page, t, project) {
  const path = '/v1/projects/' + project + '/quotas';
  await page.getByLabel('New limit for sandboxes').fill('3');
  await page.getByRole('button', { name: 'Save limits' }).click();
  await expectSoon('a quota set from the page reads back as its own', () =>
    page.locator('tr[data-quota="sandboxes"]').filter({ hasText: 'own' }).locator('td.limit', { hasText: /^3$/ }).waitFor());
  const got = (await apiAnswer('GET', path, undefined, ADMIN)).body.quotas.sandboxes;
  check(got.limit === 3 && !got.is_default, 'the API has the limit (' + JSON.stringify(got) + ')');

  const refusal = await apiAnswer('PUT', path, { sandboxes: -5 }, ADMIN);
  check(refusal.status === 400 && refusal.body.error.message.includes('sandboxes'),
    'the API refuses -5 naming the quota (' + JSON.stringify(refusal) + ')');
  t.allow(/400 .*\/quotas$|status of 400/);
  await page.getByLabel('New limit for sandboxes').fill('-5');
  await page.getByRole('button', { name: 'Save limits' }).click();
  await expectSoon("a bad limit shows the API's 400", () =>
    page.getByRole('alert').filter({ hasText: 'invalid_argument: ' + refusal.body.error.message }).waitFor());
  t.allow(null);
  check((await page.getByLabel('New limit for sandboxes').getAttribute('aria-invalid')) === 'true',
    'the quota it names is marked invalid');
  await step(page, '9-quotas');
}

async function checkAdmin(t) {
  const page = await t.newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
  await signIn(page, ADMIN);
  const projectsLink = page.getByRole('navigation').getByRole('link', { name: 'Projects' });
  await expectSoon('the admin key has Projects in the nav', () => projectsLink.waitFor());
  await projectsLink.click();
  const name = 'console-admin-' + crypto.randomBytes(4).toString('hex');
  await page.getByLabel('Project name').fill(name);
  await page.getByRole('button', { name: 'Create project' }).click();
  const row = page.locator('tr', { hasText: name });
  await expectSoon('the project created from the page is listed', () => row.waitFor());
  const project = await row.getAttribute('data-id');
  await step(page, '7-projects');
  await row.getByRole('link').click();
  await expectSoon('its page opens with its name and no keys', async () => {
    await page.getByRole('heading', { name: project }).waitFor();
    await page.getByText(name + ', created').waitFor();
    await page.getByText('No keys yet.').waitFor();
  });

  const key = await createKey(page);
  await checkQuotas(page, t, project);

  const keyRow = page.locator('tr.revoked', { hasText: 'ci' });
  page.once('dialog', (d) => d.accept());
  await page.getByRole('button', { name: /^Revoke key_/ }).click();
  await expectSoon('Revoke, confirmed, shows the key revoked', () => keyRow.waitFor());
  const res = await elsewhere('GET', '/v1/sandboxes', undefined, key);
  check(res.status === 401, 'the API refuses the revoked key (' + res.status + ')');
  await page.setViewportSize({ width: 360, height: 700 });
  await step(page, '10-project-narrow');
  await page.setViewportSize({ width: 1100, height: 700 });
  await checkOrg(page);
}

// An org made and the project put into it from the project's page; the
// Secrets and Audit pages then show the org's secrets and log (the tab
// remembers the org named).
async function checkOrg(page) {
  const org = 'console-' + crypto.randomBytes(4).toString('hex');
  await page.getByLabel('Org id').fill(org);
  await page.getByRole('button', { name: 'Create org' }).click();
  await expectSoon('Create org makes the org', () =>
    page.getByRole('status').filter({ hasText: `Org ${org} created.` }).waitFor());
  await page.getByRole('button', { name: 'Put into org' }).click();
  await expectSoon('Put into org puts the project into it', () =>
    page.getByRole('status').filter({ hasText: `In org ${org}` }).waitFor());

  await page.getByRole('navigation').getByRole('link', { name: 'Secrets' }).click();
  await page.getByLabel('Org id').fill(org);
  await page.getByRole('button', { name: 'Show' }).click();
  const orgSecrets = page.getByRole('region', { name: 'Org secrets' });
  const form = orgSecrets.getByRole('form', { name: 'New org secret' });
  await form.getByLabel('Name', { exact: true }).fill('shared');
  await form.getByLabel('Value', { exact: true }).fill('v');
  await form.getByLabel('Host 1', { exact: true }).fill('api.example.org');
  await form.getByRole('button', { name: 'Create secret' }).click();
  await expectSoon("the org's secret is listed under the org", () =>
    orgSecrets.locator('tr[data-name="shared"]').filter({ hasText: 'org ' + org }).waitFor());
  await step(page, '11-org-secrets');

  await page.getByRole('navigation').getByRole('link', { name: 'Audit log' }).click();
  const orgLog = page.getByRole('region', { name: 'Org audit log' }).locator('table.audit tbody tr');
  await expectSoon("the org's audit log shows its creation and its secret", async () => {
    await orgLog.filter({ hasText: 'create_org' }).waitFor();
    await orgLog.filter({ hasText: 'create_secret' }).waitFor();
  });
  await step(page, '12-org-audit');
}

run(async (page, t) => {
  await signIn(page);
  await checkSecrets(page, t);
  await checkAudit(page);
  await checkNoAdminPages(page);
  await checkAdmin(t);
});
