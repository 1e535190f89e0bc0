import { sql } from 'slonik';
import { z } from 'zod';
import type { Db } from '../activities/store/db';
import { tenantExists } from '../activities/store/keys';
import { getLimits, setLimits, type Limits } from '../activities/store/rate-limits';
import { UsageError } from './cli';

const FLAGS = {
  rpm: 'requests_per_minute',
  tpm: 'tokens_per_minute',
  tpd: 'tokens_per_day',
  tpmonth: 'tokens_per_month',
} as const;

/**
 * `keys limits`: sets (or shows) the limits of one key (--key) or of a whole tenant (--tenant).
 * Every replica sees the change within a second (NOTIFY from the rate_limits trigger).
 * @throws UsageError on a missing target, an unknown key or tenant, or a value that is not a whole number ≥ 0
 */
export async function limitsCommand(
  db: Db,
  values: { key?: string; tenant?: string } & Partial<Record<keyof typeof FLAGS, string>>,
): Promise<unknown> {
  if (!values.key === !values.tenant)
    throw new UsageError('limits needs exactly one of --key <key_id> or --tenant <id>');
  let tenantId: string;
  if (values.key) {
    const owner = await db.maybeOneFirst(
      sql.type(z.object({ tenant_id: z.string() }))`SELECT tenant_id FROM api_keys WHERE id = ${values.key}`,
    );
    if (!owner) throw new UsageError(`no key ${values.key}`);
    tenantId = owner;
  } else {
    tenantId = values.tenant as string;
    if (!(await tenantExists(db, tenantId))) throw new UsageError(`tenant ${tenantId} does not exist`);
  }
  const scope = values.key ?? '';
  const changes: Partial<Record<keyof Limits, number | null>> = {};
  for (const [flag, field] of Object.entries(FLAGS) as Array<[keyof typeof FLAGS, keyof Limits]>) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (!/^\d{1,15}$/.test(raw)) throw new UsageError(`--${flag} must be a whole number ≥ 0 (0 clears the limit)`);
    changes[field] = Number(raw) === 0 ? null : Number(raw);
  }
  if (Object.keys(changes).length) await setLimits(db, tenantId, scope, changes);
  const now = await getLimits(db, tenantId, scope);
  return { tenant_id: tenantId, key_id: values.key ?? null, limits: (values.key ? now.key : now.tenant) ?? {} };
}
