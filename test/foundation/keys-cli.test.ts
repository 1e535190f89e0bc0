import { runKeysCli } from '../../workers/keys-command';
import { captureCli } from '../helpers/cli';
import { startHarness, type Harness } from '../helpers/harness';
import { pollUntil } from '../helpers/poll';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.close());

const cli = (args: string[]) => captureCli(runKeysCli, args, { DATABASE_URL: h.dbUrl });

test('create, bootstrap, list and revoke through the operator CLI, against the running service', async () => {
  const created = await cli(['create', '--scopes', 'runtime:chat,runtime:email:send', '--name', 'ops']);
  expect(created.code).toBe(0);
  expect(created.out.api_key).toMatch(/^svc\./);
  expect(created.out.scopes).toEqual(['runtime:chat', 'runtime:email:send']);
  const live = await h.req('GET', '/v1/key', { key: created.out.api_key });
  expect(live.status).toBe(200);
  expect(live.body.tenant_id).toBe(created.out.tenant_id);

  const boot = await cli(['bootstrap', '--app', 'Studio', '--tenant', created.out.tenant_id]);
  expect(boot.code).toBe(0);
  expect(boot.out.api_key).toMatch(/^agb\./);
  expect(boot.out.scopes).toEqual(['bootstrap:app:studio']);

  const list = await cli(['list', '--tenant', created.out.tenant_id]);
  expect(list.out.keys.map((k: { key_id: string }) => k.key_id).sort()).toEqual(
    [created.out.key_id, boot.out.key_id].sort(),
  );
  expect(JSON.stringify(list.out)).not.toContain(created.out.api_key.split('.')[2]);

  const revoked = await cli(['revoke', created.out.key_id]);
  expect(revoked.out).toEqual({ key_id: created.out.key_id, revoked: true });
  // The CLI is another process: the API drops its cached key on the NOTIFY (milliseconds later).
  await pollUntil(
    () => h.req('GET', '/v1/key', { key: created.out.api_key }),
    (r) => r.status === 401,
    5000,
  );
});

test.each([
  [[]],
  [['frobnicate']],
  [['create']],
  [['create', '--scopes', 'Not A Scope']],
  [['create', '--scopes', 'runtime:chat', '--tenant', 'ten_missing']],
  [['revoke']],
  [['bootstrap']],
  [['list', '--bogus']],
])('bad arguments %p exit non-zero with a usage line', async (args) => {
  const r = await cli(args);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/usage: npm run -s keys/);
});
