import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Db } from './db';
import { UsageRow } from '../../schema/gateway';

/** Limits of a key or a tenant; undefined = no limit on that dimension. */
export interface Limits {
  requests_per_minute?: number;
  tokens_per_minute?: number;
  tokens_per_day?: number;
  tokens_per_month?: number;
}
export const LIMIT_FIELDS = ['requests_per_minute', 'tokens_per_minute', 'tokens_per_day', 'tokens_per_month'] as const;

const LimitRow = z.object({
  key_id: z.string(),
  requests_per_minute: z.number().nullable(),
  tokens_per_minute: z.number().nullable(),
  tokens_per_day: z.number().nullable(),
  tokens_per_month: z.number().nullable(),
});

function limitsOf(r: z.infer<typeof LimitRow> | undefined): Limits | undefined {
  if (!r) return undefined;
  const out: Limits = {};
  for (const f of LIMIT_FIELDS) if (r[f] !== null) out[f] = r[f];
  return Object.keys(out).length ? out : undefined;
}

/** The key's own limits and its tenant's (key_id ''). */
export async function getLimits(db: Db, tenantId: string, keyId: string): Promise<{ key?: Limits; tenant?: Limits }> {
  const rows = await db.any(sql.type(LimitRow)`
    SELECT key_id, requests_per_minute, tokens_per_minute, tokens_per_day, tokens_per_month
    FROM rate_limits WHERE tenant_id = ${tenantId} AND key_id IN (${keyId}, '')`);
  return { key: limitsOf(rows.find((r) => r.key_id === keyId)), tenant: limitsOf(rows.find((r) => r.key_id === '')) };
}

/** Sets (merging) the limits of a key (keyId) or of the tenant (keyId ''); null clears one. */
export async function setLimits(
  db: Db,
  tenantId: string,
  keyId: string,
  limits: Partial<Record<keyof Limits, number | null>>,
): Promise<void> {
  const v = (f: keyof Limits) => (limits[f] === undefined ? null : limits[f]);
  const keep = (f: keyof Limits) =>
    limits[f] === undefined
      ? sql.fragment`rate_limits.${sql.identifier([f])}`
      : sql.fragment`EXCLUDED.${sql.identifier([f])}`;
  await db.query(sql.unsafe`
    INSERT INTO rate_limits (tenant_id, key_id, requests_per_minute, tokens_per_minute, tokens_per_day, tokens_per_month)
    VALUES (${tenantId}, ${keyId}, ${v('requests_per_minute')}, ${v('tokens_per_minute')}, ${v('tokens_per_day')}, ${v('tokens_per_month')})
    ON CONFLICT (tenant_id, key_id) DO UPDATE SET
      requests_per_minute = ${keep('requests_per_minute')}, tokens_per_minute = ${keep('tokens_per_minute')},
      tokens_per_day = ${keep('tokens_per_day')}, tokens_per_month = ${keep('tokens_per_month')}, updated_at = now()`);
}

export interface CounterDelta {
  tenantId: string;
  scope: string;
  win: 'minute' | 'day' | 'month';
  windowStart: number;
  requests: number;
  tokens: number;
}

const CounterRow = z.object({
  tenant_id: z.string(),
  scope: z.string(),
  win: z.string(),
  window_start: z.number(),
  requests: z.number(),
  tokens: z.number(),
});

/** Adds the deltas (zero deltas read) and returns the shared totals, in one statement. */
export async function addCounters(
  db: CommonQueryMethods,
  deltas: CounterDelta[],
): Promise<readonly z.infer<typeof CounterRow>[]> {
  if (!deltas.length) return [];
  return db.any(sql.type(CounterRow)`
    INSERT INTO rate_counters (tenant_id, scope, win, window_start, requests, tokens)
    SELECT * FROM ${sql.unnest(
      deltas.map((d) => [d.tenantId, d.scope, d.win, d.windowStart, d.requests, d.tokens]),
      ['text', 'text', 'text', 'int8', 'int8', 'int8'],
    )}
    ON CONFLICT (tenant_id, scope, win, window_start) DO UPDATE SET
      requests = rate_counters.requests + EXCLUDED.requests, tokens = rate_counters.tokens + EXCLUDED.tokens
    RETURNING tenant_id, scope, win, window_start, requests, tokens`);
}

export interface UsageDelta {
  tenantId: string;
  keyId: string;
  lane: string;
  day: string;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  estimated: number;
}

/**
 * What work answered outside its request (a background response, a batch's requests) used: its tokens added to the
 * rate-limit windows it was admitted in (token budgets see it) and its lanes' rows of today's usage report.
 */
export async function chargeWork(
  db: CommonQueryMethods,
  w: {
    tenantId: string;
    keyId: string;
    windows: ReadonlyArray<Omit<CounterDelta, 'requests' | 'tokens'>>;
    lanes: ReadonlyArray<{ lane: string; requests: number; errors: number; tokensIn: number; tokensOut: number }>;
  },
): Promise<void> {
  const tokens = w.lanes.reduce((n, l) => n + l.tokensIn + l.tokensOut, 0);
  if (tokens && w.windows.length)
    await addCounters(
      db,
      w.windows.map((x) => ({ ...x, requests: 0, tokens })),
    );
  const day = new Date().toISOString().slice(0, 10);
  await addUsage(
    db,
    w.lanes
      .filter((l) => l.requests || l.tokensIn || l.tokensOut)
      .map((l) => ({ tenantId: w.tenantId, keyId: w.keyId, day, estimated: 0, ...l })),
  );
}

export async function addUsage(db: CommonQueryMethods, deltas: UsageDelta[]): Promise<void> {
  if (!deltas.length) return;
  await db.query(sql.unsafe`
    INSERT INTO usage_daily (tenant_id, key_id, lane, day, requests, errors, tokens_in, tokens_out, estimated)
    SELECT * FROM ${sql.unnest(
      deltas.map((d) => [
        d.tenantId,
        d.keyId,
        d.lane,
        d.day,
        d.requests,
        d.errors,
        d.tokensIn,
        d.tokensOut,
        d.estimated,
      ]),
      ['text', 'text', 'text', 'date', 'int8', 'int8', 'int8', 'int8', 'int8'],
    )}
    ON CONFLICT (tenant_id, day, key_id, lane) DO UPDATE SET
      requests = usage_daily.requests + EXCLUDED.requests, errors = usage_daily.errors + EXCLUDED.errors,
      tokens_in = usage_daily.tokens_in + EXCLUDED.tokens_in, tokens_out = usage_daily.tokens_out + EXCLUDED.tokens_out,
      estimated = usage_daily.estimated + EXCLUDED.estimated`);
}

/** The tenant's usage between two UTC days (inclusive), grouped by key, lane or day. */
export async function usageReport(
  db: Db,
  o: { tenantId: string; from: string; to: string; groupBy: 'key' | 'lane' | 'day' },
): Promise<readonly UsageRow[]> {
  const col = { key: sql.fragment`key_id`, lane: sql.fragment`lane`, day: sql.fragment`to_char(day, 'YYYY-MM-DD')` }[
    o.groupBy
  ];
  return db.any(sql.type(UsageRow)`
    SELECT ${col} AS "group", sum(requests)::int8 AS requests, sum(errors)::int8 AS errors,
           sum(tokens_in)::int8 AS tokens_in, sum(tokens_out)::int8 AS tokens_out, sum(estimated)::int8 AS estimated_requests
    FROM usage_daily
    WHERE tenant_id = ${o.tenantId} AND day BETWEEN ${o.from}::date AND ${o.to}::date
    GROUP BY 1 ORDER BY 1`);
}
