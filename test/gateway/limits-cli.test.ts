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

test('keys limits sets, merges, clears and prints key and tenant limits; the running API shows them', async () => {
  const k = await h.key(['runtime:chat']);
  expect((await h.req('GET', '/v1/key', { key: k.apiKey })).body.limits).toEqual({ key: null, tenant: null });
  const set = await cli(['limits', '--key', k.keyId, '--rpm', '60', '--tpd', '100000']);
  expect(set.code).toBe(0);
  expect(set.out).toEqual({
    tenant_id: k.tenantId,
    key_id: k.keyId,
    limits: { requests_per_minute: 60, tokens_per_day: 100000 },
  });
  const merged = await cli(['limits', '--key', k.keyId, '--rpm', '0', '--tpm', '5000']);
  expect(merged.out.limits).toEqual({ tokens_per_minute: 5000, tokens_per_day: 100000 });
  const tenant = await cli(['limits', '--tenant', k.tenantId, '--tpmonth', '9000000']);
  expect(tenant.out).toEqual({ tenant_id: k.tenantId, key_id: null, limits: { tokens_per_month: 9000000 } });
  expect((await cli(['limits', '--tenant', k.tenantId])).out.limits).toEqual({ tokens_per_month: 9000000 });
  // The API had cached "no limits": the NOTIFY from the CLI's change refreshes it.
  const shown = await pollUntil(
    () => h.req('GET', '/v1/key', { key: k.apiKey }),
    (r) => r.body.limits.tenant !== null,
    5000,
  );
  expect(shown.body.limits).toEqual({
    key: { tokens_per_minute: 5000, tokens_per_day: 100000 },
    tenant: { tokens_per_month: 9000000 },
  });
});

test.each([
  [['limits']],
  [['limits', '--key', 'key_nope', '--rpm', '5']],
  [['limits', '--tenant', 'ten_nope']],
  [['limits', '--key', 'k', '--tenant', 't']],
  [['limits', '--tenant', 'x', '--rpm', '-3']],
])('keys %j is a usage error (exit 2)', async (args) => {
  const r = await cli(args);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/limits|key|tenant|rpm/);
});
