import type { FakeOpenAI } from '../helpers/fake-openai';
import { withFakeUpstream } from '../helpers/fake-upstream';
import type { Harness } from '../helpers/harness';

// Keys returned by the registration endpoints, used on real routes: what each app's scopes
// open and what they do not. Scope checks use routes whose scope the spec states (chat,
// spaces); GET /v1/key shows the key is accepted at all.
let fake: FakeOpenAI;
let h: Harness;
withFakeUpstream({ scopes: ['runtime:chat'], resetEach: { reply: 'hello from upstream' } }, (up) => ({ fake, h } = up));

const TOKEN = { 'X-Registration-Token': 'test-registration-token' };
const chat = (key: string) =>
  h.req('POST', '/v1/chat/completions', { key, body: { model: 'mid', messages: [{ role: 'user', content: 'hi' }] } });

/** The statuses a key gets on one route per runtime scope that has a route today. */
async function access(key: string) {
  const c = await chat(key);
  return {
    key: (await h.req('GET', '/v1/key', { key })).status,
    chat: c.status,
    models: (await h.req('GET', '/v1/models', { key })).status,
    sessions: (await h.req('GET', '/v1/sessions', { key })).status,
    spaces: (await h.req('GET', '/v1/spaces', { key })).status,
  };
}

describe('keys minted by POST /v1/app/register work on real routes', () => {
  test.each([
    ['home', { key: 200, chat: 200, models: 200, sessions: 200, spaces: 200 }],
    ['studio', { key: 200, chat: 200, models: 200, sessions: 200, spaces: 403 }],
    ['mobile', { key: 200, chat: 200, models: 200, sessions: 200, spaces: 403 }],
    ['dev', { key: 200, chat: 200, models: 200, sessions: 200, spaces: 403 }],
  ])('%s key', async (app, expected) => {
    const minted = await h.req('POST', '/v1/app/register', {
      headers: TOKEN,
      body: { app_name: app, device_id: `${app}-device` },
    });
    expect(minted.status).toBe(200);
    const before = fake.chats.length;
    expect(await access(minted.body.api_key)).toEqual(expected);
    // The chat really went to the upstream and came back.
    expect(fake.chats.length - before).toBe(1);
    const me = await h.req('GET', '/v1/key', { key: minted.body.api_key });
    expect(me.body).toMatchObject({
      key_id: minted.body.key_id,
      tenant_id: minted.body.tenant_id,
      kind: 'runtime',
      app,
      scopes: minted.body.scopes,
    });
    if (expected.spaces === 403) {
      const denied = await h.req('GET', '/v1/spaces', { key: minted.body.api_key });
      expect(denied.body).toMatchObject({ code: 'forbidden', scope: 'runtime:spaces' });
    } else {
      // home can create a space in its own tenant, and list it back.
      const made = await h.req('POST', '/v1/spaces', { key: minted.body.api_key, body: { name: 'Home space' } });
      expect(made.status).toBe(201);
      const list = await h.req('GET', '/v1/spaces', { key: minted.body.api_key });
      expect(list.body.data.map((s: { id: string }) => s.id)).toContain(made.body.id);
    }
  });

  test('a mobile key cannot reach what mobile was not granted, and its chat answers', async () => {
    const minted = await h.req('POST', '/v1/app/register', { headers: TOKEN, body: { app_name: 'Mobile' } });
    expect(minted.body.scopes.sort()).toEqual(['runtime:chat', 'runtime:models']);
    const c = await chat(minted.body.api_key);
    expect(c.body.choices[0].message.content).toBe('hello from upstream');
    const spaces = await h.req('POST', '/v1/spaces', { key: minted.body.api_key, body: { name: 'nope' } });
    expect({ status: spaces.status, scope: spaces.body.scope }).toEqual({ status: 403, scope: 'runtime:spaces' });
  });

  test("a key from another tenant does not see this tenant's space (404)", async () => {
    const home = await h.req('POST', '/v1/app/register', { headers: TOKEN, body: { app_name: 'home' } });
    const other = await h.req('POST', '/v1/app/register', { headers: TOKEN, body: { app_name: 'home' } });
    expect(other.body.tenant_id).not.toBe(home.body.tenant_id);
    const made = await h.req('POST', '/v1/spaces', { key: home.body.api_key, body: { name: 'Private' } });
    expect((await h.req('GET', `/v1/spaces/${made.body.id}/documents`, { key: other.body.api_key })).status).toBe(404);
    expect((await h.req('GET', `/v1/spaces/${made.body.id}/documents`, { key: home.body.api_key })).status).toBe(200);
  });
});

describe('keys minted by POST /v1/agent/register work on real routes', () => {
  test('a bootstrap-minted app (not first-party) gets chat and models, not spaces', async () => {
    const boot = await h.key(['bootstrap:app:build-bot'], { kind: 'bootstrap' });
    const minted = await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: 'Build Bot' } });
    expect(minted.status).toBe(200);
    expect(minted.body).toMatchObject({ app: 'build-bot', tenant_id: boot.tenantId });
    expect(await access(minted.body.api_key)).toEqual({ key: 200, chat: 200, models: 200, sessions: 200, spaces: 403 });
    // The bootstrap key itself still cannot do what its minted key does.
    expect((await chat(boot.apiKey)).status).toBe(403);
  });

  test.each([
    ['home', 200],
    ['studio', 403],
    ['mobile', 403],
    ['dev', 403],
  ])("a bootstrap-minted %s key has that first-party app's scopes (spaces %i)", async (app, spaces) => {
    const boot = await h.key([`bootstrap:app:${app}`], { kind: 'bootstrap' });
    const minted = await h.req('POST', '/v1/agent/register', { key: boot.apiKey, body: { app_name: app } });
    expect(minted.status).toBe(200);
    expect(await access(minted.body.api_key)).toEqual({ key: 200, chat: 200, models: 200, sessions: 200, spaces });
  });
});
