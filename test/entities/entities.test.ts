import type { Harness } from '../helpers/harness';
import { withHarness } from '../helpers/with-harness';

let h: Harness;
let key: string;
let other: string;
withHarness({ scopes: ['runtime:records'], other: true }, (harness, k, o) => ((h = harness), (key = k), (other = o)));

const upsert = (body: unknown, k = key) => h.req('POST', '/v1/entities', { key: k, body });

test('upsert creates, then updates by id or by a case-insensitive name match', async () => {
  const a = await upsert({ name: 'Acme Ltd', kind: 'vendor', aliases: ['ACME', 'Acme Limited'] });
  expect(a.status).toBe(201);
  expect(a.body).toMatchObject({
    name: 'Acme Ltd',
    kind: 'vendor',
    aliases: ['ACME', 'Acme Limited'],
    created: true,
    alias_conflicts: [],
    event_count: 0,
  });
  expect(a.body.id).toMatch(/^ent_/);
  // Same name, other case and spacing: the same entity, aliases added.
  const again = await upsert({ name: '  acme   LTD ', aliases: ['Acme Corp'] });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({
    id: a.body.id,
    created: false,
    kind: 'vendor',
    aliases: ['ACME', 'Acme Limited', 'Acme Corp'],
  });
  // By id: rename and replace the aliases.
  const byId = await upsert({ id: a.body.id, name: 'Acme Group', kind: 'business', aliases: ['Acme'] });
  expect(byId.status).toBe(200);
  expect(byId.body).toMatchObject({ id: a.body.id, name: 'Acme Group', kind: 'business', aliases: ['Acme'] });
  // By alias: the entity holding the alias is the one updated.
  const byAlias = await upsert({ name: 'acme' });
  expect(byAlias.body).toMatchObject({ id: a.body.id, created: false, name: 'acme' });
  expect((await upsert({ id: 'ent_nope', name: 'x' })).status).toBe(404);
  expect((await upsert({ name: 'x', kind: 'planet' })).status).toBe(400);
  expect((await upsert({ name: '' })).status).toBe(400);
  expect((await upsert({ name: 'x', aliases: 'y' })).status).toBe(400);
});

test('an alias another entity holds stays with it and is reported', async () => {
  const bob = (await upsert({ name: 'Bob Stone', kind: 'person', aliases: ['Bobby'] })).body;
  const rob = await upsert({ name: 'Robert Rock', kind: 'person', aliases: ['bobby', 'Rob'] });
  expect(rob.status).toBe(201);
  expect(rob.body.aliases).toEqual(['Rob']);
  expect(rob.body.alias_conflicts).toEqual([{ alias: 'bobby', entity_id: bob.id }]);
  expect((await h.req('GET', `/v1/entities/${bob.id}`, { key })).body.aliases).toEqual(['Bobby']);
});

test('search matches names and aliases case-insensitively, best match first; kind and limit filter', async () => {
  await upsert({ name: 'Northwind Traders', kind: 'business', aliases: ['NWT'] });
  await upsert({ name: 'Wind Power Co', kind: 'vendor' });
  await upsert({ name: 'Windy', kind: 'person', aliases: ['Northwind Contact'] });
  const r = await h.req('GET', '/v1/entities?search=WIND', { key });
  expect(r.status).toBe(200);
  // name prefix (Wind Power Co, Windy) before name substring (Northwind Traders)
  expect(r.body.data.map((e: { name: string }) => e.name)).toEqual(['Wind Power Co', 'Windy', 'Northwind Traders']);
  const exact = await h.req('GET', '/v1/entities?search=nwt', { key });
  expect(exact.body.data.map((e: { name: string }) => e.name)).toEqual(['Northwind Traders']);
  const viaAlias = await h.req('GET', '/v1/entities?search=northwind', { key });
  expect(viaAlias.body.data.map((e: { name: string }) => e.name)).toEqual(['Northwind Traders', 'Windy']);
  const kind = await h.req('GET', '/v1/entities?search=wind&kind=vendor', { key });
  expect(kind.body.data.map((e: { name: string }) => e.name)).toEqual(['Wind Power Co']);
  expect((await h.req('GET', '/v1/entities?search=wind&limit=1', { key })).body.data).toHaveLength(1);
  // LIKE wildcards in the search are taken literally.
  expect((await h.req('GET', '/v1/entities?search=%25', { key })).body.data).toEqual([]);
  expect((await h.req('GET', '/v1/entities?limit=0', { key })).status).toBe(400);
  expect((await h.req('GET', '/v1/entities?kind=planet', { key })).status).toBe(400);
});

test('empty query values count as absent: ?search=&kind=&limit= lists everything', async () => {
  await upsert({ name: 'Blank Filter Ltd', kind: 'business' });
  const all = await h.req('GET', '/v1/entities', { key });
  const blank = await h.req('GET', '/v1/entities?search=&kind=&limit=', { key });
  expect(blank.status).toBe(200);
  expect(blank.body.data.map((e: { id: string }) => e.id)).toEqual(all.body.data.map((e: { id: string }) => e.id));
  expect(blank.body.data.map((e: { name: string }) => e.name)).toContain('Blank Filter Ltd');
  // An empty value beside a real one: only the real one filters.
  const kindOnly = await h.req('GET', '/v1/entities?search=&kind=business', { key });
  expect(kindOnly.status).toBe(200);
  expect(kindOnly.body.data.length).toBeGreaterThan(0);
  expect(kindOnly.body.data.every((e: { kind: string }) => e.kind === 'business')).toBe(true);
  expect((await h.req('GET', '/v1/entities/x?event_limit=', { key })).status).toBe(404);
});

test('events: recorded with defaults, listed newest first, limited by event_limit, linked to tasks', async () => {
  const e = (await upsert({ name: 'Event Target' })).body;
  const task = (await h.req('POST', '/v1/tasks', { key, body: { title: 'linked' } })).body;
  const before = Date.now();
  const now = await h.req('POST', `/v1/entities/${e.id}/events`, {
    key,
    body: { kind: 'note', content: 'just now', task_id: task.id, metadata: { by: 'test' } },
  });
  expect(now.status).toBe(201);
  expect(now.body).toMatchObject({
    entity_id: e.id,
    kind: 'note',
    content: 'just now',
    task_id: task.id,
    metadata: { by: 'test' },
  });
  expect(Date.parse(now.body.occurred_at)).toBeGreaterThanOrEqual(before - 1000);
  await h.req('POST', `/v1/entities/${e.id}/events`, {
    key,
    body: { kind: 'invoice', occurred_at: '2024-01-02T10:00:00Z' },
  });
  await h.req('POST', `/v1/entities/${e.id}/events`, {
    key,
    body: { kind: 'call', occurred_at: '2025-06-01T10:00:00+02:00' },
  });
  const got = await h.req('GET', `/v1/entities/${e.id}`, { key });
  expect(got.body.event_count).toBe(3);
  expect(got.body.events.map((x: { kind: string }) => x.kind)).toEqual(['note', 'call', 'invoice']);
  expect(got.body.events[1].occurred_at).toBe('2025-06-01T08:00:00.000Z');
  const limited = await h.req('GET', `/v1/entities/${e.id}?event_limit=1`, { key });
  expect(limited.body.events.map((x: { kind: string }) => x.kind)).toEqual(['note']);
  expect((await h.req('GET', `/v1/entities/${e.id}?event_limit=-1`, { key })).status).toBe(400);
  // Bad bodies are 400; unknown and foreign tasks are 404.
  expect((await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'email' } })).status).toBe(400);
  expect(
    (await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'note', metadata: { n: 1 } } })).status,
  ).toBe(400);
  expect(
    (await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'note', occurred_at: 'yesterday' } }))
      .status,
  ).toBe(400);
  expect(
    (await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'note', task_id: 'tsk_nope' } })).status,
  ).toBe(404);
  const foreignTask = (await h.req('POST', '/v1/tasks', { key: other, body: { title: 'theirs' } })).body;
  expect(
    (await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'note', task_id: foreignTask.id } }))
      .status,
  ).toBe(404);
  // Deleting the task keeps the event, unlinked.
  await h.req('DELETE', `/v1/tasks/${task.id}`, { key });
  const after = await h.req('GET', `/v1/entities/${e.id}`, { key });
  expect(after.body.events[0]).toMatchObject({ content: 'just now', task_id: null });
  // Without event_limit the whole history comes (the spec's "full event history"), up to 1000 events.
  for (let i = 0; i < 60; i++)
    await h.req('POST', `/v1/entities/${e.id}/events`, { key, body: { kind: 'note', content: `n${i}` } });
  const full = await h.req('GET', `/v1/entities/${e.id}`, { key });
  expect([full.body.event_count, full.body.events.length]).toEqual([63, 63]);
});

test('a history larger than the answer can carry comes newest first up to about 8 MiB; event_count tells the rest', async () => {
  const e = (await upsert({ name: 'Chatty' })).body;
  const big = 'x'.repeat(100_000);
  for (let i = 0; i < 90; i++)
    expect(
      (
        await h.req('POST', `/v1/entities/${e.id}/events`, {
          key,
          body: { kind: 'note', content: big, occurred_at: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString() },
        })
      ).status,
    ).toBe(201);
  const got = await h.req('GET', `/v1/entities/${e.id}`, { key });
  expect(got.status).toBe(200);
  expect(got.body.event_count).toBe(90);
  const n = got.body.events.length;
  // 8 MiB of 100,000-character events: the newest 84 (the one that passes the budget is the last one in).
  expect(n).toBe(84);
  expect(got.body.events[0].occurred_at).toBe('2025-01-01T01:29:00.000Z');
  // A smaller event_limit still applies first.
  expect((await h.req('GET', `/v1/entities/${e.id}?event_limit=3`, { key })).body.events).toHaveLength(3);
});

test("tenants are isolated: 404 for another tenant's entity, and no cross-tenant matches", async () => {
  const mine = (await upsert({ name: 'Shared Name', aliases: ['SN'] })).body;
  expect((await h.req('GET', `/v1/entities/${mine.id}`, { key: other })).status).toBe(404);
  expect((await h.req('POST', `/v1/entities/${mine.id}/events`, { key: other, body: { kind: 'note' } })).status).toBe(
    404,
  );
  expect((await upsert({ id: mine.id, name: 'hijack' }, other)).status).toBe(404);
  expect((await h.req('GET', '/v1/entities?search=shared', { key: other })).body.data).toEqual([]);
  // The same name and alias in another tenant is another entity, with no alias conflict.
  const theirs = await upsert({ name: 'Shared Name', aliases: ['SN'] }, other);
  expect(theirs.status).toBe(201);
  expect(theirs.body.id).not.toBe(mine.id);
  expect(theirs.body.alias_conflicts).toEqual([]);
});
