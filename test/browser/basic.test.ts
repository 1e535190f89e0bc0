import { pollUntil } from '../helpers/poll';
import { refOf, withBrowser, type BrowserFixture } from './browser-harness';

jest.setTimeout(120_000);

let f: BrowserFixture;
withBrowser({}, (x) => (f = x));

test('health: Chromium found with its version, one browser worker polling, capacity', async () => {
  const r = await f.h.req('GET', '/v1/browser/health', { key: f.key });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({
    available: true,
    reason: null,
    chromium: { path: '/usr/bin/chromium', found: true },
    workers: 1,
  });
  expect(r.body.chromium.version).toMatch(/Chromium \d+/);
  expect(r.body.capacity.per_worker).toBe(8);
});

test('open with a url alone (the spec’s body) opens a session for it; a page that fails leaves none behind', async () => {
  const opened = await f.h.req('POST', '/v1/browser/open', { key: f.key, body: { url: `${f.pages.url}/form` } });
  expect(opened.status).toBe(200);
  expect(opened.body).toMatchObject({
    session_id: expect.stringMatching(/^bse_/),
    url: `${f.pages.url}/form`,
    title: 'T',
  });
  const id: string = opened.body.session_id;
  expect((await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key })).body).toMatchObject({ status: 'open' });
  expect((await f.snapshot(id)).body.text).toContain('heading "Sign up"');
  expect((await f.h.req('DELETE', `/v1/browser/sessions?session_id=${id}`, { key: f.key })).status).toBe(200);

  const live = async () => (await f.h.req('GET', '/v1/browser/sessions?live=true', { key: f.key })).body.data.length;
  const before = await live();
  const refused = await f.h.req('POST', '/v1/browser/open', { key: f.key, body: { url: 'http://169.254.169.254/' } });
  expect(refused.status).toBe(400);
  expect(await live()).toBe(before);
  // A retry with the same Idempotency-Key gets the first answer: one session, not two.
  const retry = () =>
    f.h.req('POST', '/v1/browser/open', {
      key: f.key,
      body: { url: `${f.pages.url}/form` },
      headers: { 'Idempotency-Key': 'open-once-1' },
    });
  const [first, again] = [await retry(), await retry()];
  expect(again.body.session_id).toBe(first.body.session_id);
  expect(await live()).toBe(before + 1);
  await f.h.req('DELETE', `/v1/browser/sessions?session_id=${first.body.session_id}`, { key: f.key });
  // With a session named, the answer names it too.
  const named = await f.session();
  expect((await f.open(named, '/form')).body.session_id).toBe(named);
});

test('open, snapshot, fill a form by refs, submit, read the result', async () => {
  const id = await f.session();
  const opened = await f.open(id, '/form');
  expect(opened.status).toBe(200);
  expect(opened.body).toMatchObject({ url: `${f.pages.url}/form`, title: 'T', status: 200 });

  const snap = await f.snapshot(id);
  expect(snap.status).toBe(200);
  expect(snap.body.text).toContain('heading "Sign up"');
  expect(snap.body.truncated).toBe(false);
  expect(snap.body.token_estimate).toBeGreaterThan(10);
  const text: string = snap.body.text;

  expect((await f.act(id, { action: 'fill', ref: refOf(text, /textbox "Name"/), text: 'Ada' })).status).toBe(200);
  expect((await f.act(id, { action: 'select', ref: refOf(text, /combobox "Colour"/), values: ['blue'] })).status).toBe(
    200,
  );
  expect((await f.act(id, { action: 'check', ref: refOf(text, /checkbox "Accept terms"/) })).status).toBe(200);
  const click = await f.act(id, { action: 'click', ref: refOf(text, /button "Submit"/) });
  expect(click.status).toBe(200);
  expect(click.body.ok).toBe(true);
  const after = await f.act(id, { action: 'wait_for', text: 'Hello Ada' });
  expect(after.status).toBe(200);
  expect(after.body.url).toContain('/result?name=Ada&colour=blue&terms=on');
  const result = await f.snapshot(id);
  expect(result.body.text).toContain('Hello Ada, colour blue, terms on');

  // The session row follows the page (checkpoint once the session is quiet after a command).
  const s = await pollUntil(
    () => f.h.req('GET', `/v1/browser/sessions/${id}`, { key: f.key }),
    (r) => /\/result\?name=Ada/.test(r.body.url ?? ''),
  );
  expect(s.body).toMatchObject({ id, status: 'open' });
  expect(s.body.checkpoint_at).not.toBeNull();
});

test('click by ref with snapshot_diff; snapshot diff answers only the changed lines', async () => {
  const id = await f.session();
  await f.open(id, '/form');
  const text = (await f.snapshot(id)).body.text;
  const r = await f.act(id, { action: 'click', ref: refOf(text, /button "Press me"/), snapshot_diff: true });
  expect(r.status).toBe(200);
  expect(r.body.snapshot_diff).toMatch(/^\+ .*clicked once/m);
  expect(r.body.snapshot_diff).toMatch(/^- .*not yet/m);
  const again = await f.snapshot(id, f.key, '&diff=true');
  expect(again.body.diff).toBe(true);
  expect(again.body.text).toBe('');
});

test('iframe elements get refs and can be clicked', async () => {
  const id = await f.session();
  await f.open(id, '/frames');
  const text = (await f.snapshot(id)).body.text;
  const ref = refOf(text, /button "Inner button"/);
  expect(ref).toMatch(/^f\d+e\d+$/);
  expect((await f.act(id, { action: 'click', ref })).status).toBe(200);
  expect((await f.snapshot(id)).body.text).toContain('button "Inner done"');
});

test('a stale ref answers 409 with a fresh-snapshot hint; an unknown ref too', async () => {
  const id = await f.session();
  await f.open(id, '/form');
  const ref = refOf((await f.snapshot(id)).body.text, /button "Submit"/);
  await f.open(id, '/frames'); // navigated away: the old refs are gone
  const r = await f.act(id, { action: 'click', ref });
  expect(r.status).toBe(409);
  expect(r.body.error).toMatch(/fresh snapshot/);
  await f.snapshot(id);
  expect((await f.act(id, { action: 'click', ref: 'e999' })).status).toBe(409);
  expect((await f.snapshot(id, f.key, '&ref=e999')).status).toBe(409);
});

test('snapshot of a ref subtree, depth and max_chars truncation', async () => {
  const id = await f.session();
  await f.open(id, '/big?n=300');
  const full = await f.snapshot(id);
  expect(full.body.truncated).toBe(false);
  const cut = await f.snapshot(id, f.key, '&max_chars=500');
  expect(cut.body.truncated).toBe(true);
  expect(cut.body.text.length).toBeLessThanOrEqual(500);
  expect(cut.body.chars).toBe(full.body.text.length);
  const headingRef = refOf(full.body.text, /heading "Big"/);
  const sub = await f.snapshot(id, f.key, `&ref=${headingRef}`);
  expect(sub.body.text).toMatch(/^- heading "Big"/);
  expect(sub.body.text).not.toContain('Item 0');
  await f.open(id, '/form');
  const deep = await f.snapshot(id);
  const shallow = await f.snapshot(id, f.key, '&depth=1');
  expect(deep.body.text).toContain('textbox "Name"');
  expect(shallow.body.text).not.toContain('textbox "Name"');
});

test('screenshot: binary PNG with Accept image/*, base64 JSON otherwise', async () => {
  const id = await f.session();
  await f.open(id, '/form');
  const res = await fetch(`${f.h.url}/v1/browser/screenshot`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.key}`, 'content-type': 'application/json', accept: 'image/*' },
    body: JSON.stringify({ session_id: id }),
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/png');
  const png = Buffer.from(await res.arrayBuffer());
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  const json = await f.h.req('POST', '/v1/browser/screenshot', {
    key: f.key,
    body: { session_id: id, format: 'jpeg', full_page: true },
  });
  expect(json.status).toBe(200);
  expect(json.body.format).toBe('jpeg');
  expect(Buffer.from(json.body.data, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
});

test('popups are closed and downloads refused; the session page stays', async () => {
  const id = await f.session();
  await f.open(id, '/popup');
  const text = (await f.snapshot(id)).body.text;
  expect((await f.act(id, { action: 'click', ref: refOf(text, /button "Open window"/) })).status).toBe(200);
  expect((await f.act(id, { action: 'click', ref: refOf(text, /link "Get file"/) })).status).toBe(200);
  const after = await f.snapshot(id);
  expect(after.body.url).toBe(`${f.pages.url}/popup`);
  const live = f.bw!.host.sessions.get(id)!;
  await pollUntil(
    async () => [live.popupsClosed, live.context.pages().length],
    ([closed, open]) => closed === 1 && open === 1,
  );
  await pollUntil(
    async () => live.downloadsRefused,
    (n) => n === 1,
  );
});

test('bad input → 400 naming the field', async () => {
  const id = await f.session();
  const cases: Array<[string, string, unknown, string]> = [
    ['POST', '/v1/browser/action', { session_id: id, action: 'explode' }, 'body.action'],
    ['POST', '/v1/browser/action', { session_id: id, action: 'fill', ref: 'e1' }, 'body.text'],
    ['POST', '/v1/browser/action', { session_id: id, action: 'click' }, 'body.ref'],
    ['POST', '/v1/browser/action', { session_id: id, action: 'click', ref: 'e1; drop' }, 'body.ref'],
    ['POST', '/v1/browser/open', { session_id: id }, 'body.url'],
    ['POST', '/v1/browser/sessions', { viewport: { width: 10, height: 800 } }, 'body.viewport.width'],
    ['POST', '/v1/browser/sessions', { idle_timeout_s: 999_999 }, 'body.idle_timeout_s'],
    ['POST', '/v1/browser/state/load', { session_id: id }, 'body.name'],
    ['POST', '/v1/browser/screenshot', { session_id: id, format: 'gif' }, 'body.format'],
  ];
  for (const [method, path, body, field] of cases) {
    const r = await f.h.req(method, path, { key: f.key, body });
    expect({ path, field, status: r.status }).toEqual({ path, field, status: 400 });
    expect(r.body.details.map((d: { path: string }) => d.path)).toContain(field);
  }
  const q = await f.h.req('GET', `/v1/browser/snapshot?session_id=${id}&max_chars=5`, { key: f.key });
  expect(q.status).toBe(400);
  expect(q.body.details[0].path).toBe('query.max_chars');
});

test('a selector that does not parse or a key Playwright does not know → 400 saying which (was 502)', async () => {
  const id = await f.session();
  expect((await f.open(id, '/form')).status).toBe(200);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ action: 'click', selector: 'div:has(> p))' }, /^The click action: the selector does not parse \(/],
    [{ action: 'fill', selector: 'xpath=//[', text: 'x' }, /^The fill action: the selector does not parse \(/],
    [{ action: 'hover', selector: 'role=' }, /^The hover action: the selector does not parse \(/],
    [{ action: 'press', key: 'Ctrl+A' }, /^The press action: Unknown key: "Ctrl"; use key names such as Enter/],
    [{ action: 'press', key: 'F99' }, /^The press action: Unknown key: "F99"/],
  ];
  for (const [body, message] of cases) {
    const r = await f.act(id, { ...body, timeout_ms: 1000 });
    expect({ body, status: r.status, code: r.body.code }).toEqual({ body, status: 400, code: 'invalid_request' });
    expect(r.body.error).toMatch(message);
  }
  expect((await f.act(id, { action: 'press', key: 'Control+A' })).status).toBe(200);
});

test("tenant isolation: another tenant's session answers 404 on every route; any runtime key reaches the routes", async () => {
  const id = await f.session();
  await f.open(id, '/form');
  const other = (await f.h.key(['runtime:workspaces'])).apiKey;
  const calls: Array<[string, string, unknown?]> = [
    ['GET', `/v1/browser/sessions/${id}`],
    ['GET', `/v1/browser/snapshot?session_id=${id}`],
    ['POST', '/v1/browser/open', { session_id: id, url: `${f.pages.url}/form` }],
    ['POST', '/v1/browser/action', { session_id: id, action: 'reload' }],
    ['POST', '/v1/browser/screenshot', { session_id: id }],
    ['POST', '/v1/browser/state/save', { session_id: id, name: 'x' }],
    ['DELETE', `/v1/browser/sessions/${id}`],
  ];
  for (const [method, path, body] of calls) {
    const r = await f.h.req(method, path, { key: other, body });
    expect({ path, status: r.status }).toEqual({ path, status: 404 });
  }
  const list = await f.h.req('GET', '/v1/browser/sessions', { key: other });
  expect(list.body.data).toEqual([]);
  // Browser automation is "key required" in the spec: a key with other scopes reaches it (and sees its own tenant).
  const modelsOnly = (await f.h.key(['runtime:models'])).apiKey;
  const health = await f.h.req('GET', '/v1/browser/health', { key: modelsOnly });
  expect([health.status, health.body.sessions_open]).toEqual([200, 0]);
  expect((await f.h.req('GET', `/v1/browser/sessions/${id}`, { key: modelsOnly })).status).toBe(404);
  // The owner still works, and can close it; a closed session answers 409 to commands.
  expect((await f.snapshot(id)).status).toBe(200);
  const closed = await f.h.req('DELETE', `/v1/browser/sessions?session_id=${id}`, { key: f.key });
  expect(closed.status).toBe(200);
  expect(closed.body.status).toBe('closed');
  expect((await f.snapshot(id)).status).toBe(409);
});
