import { isGrpcDeadlineError } from '@temporalio/client';
import type { Logger } from 'pino';
import { sql } from 'slonik';
import { z } from 'zod';
import { knowledgeMode } from '../activities/knowledge/mode';
import type { HealthResponse } from '../schema/system';
import type { AppDeps } from './deps';
import { CONTRACT_VERSION } from './openapi';

/**
 * Runs one dependency check with a time limit. The public answer says only `timeout` or
 * `unreachable`: the error text (hosts, ports, driver details) goes to the log, never to the client.
 */
async function timed(name: string, log: Logger, check: () => Promise<unknown>, timeoutMs: number) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new Error(`no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      }),
    ]);
    return { status: 'ok' as const, latency_ms: Math.round(performance.now() - started) };
  } catch (err) {
    const detail = (err as Error).message?.split('\n')[0].slice(0, 300) ?? String(err);
    const error =
      timedOut || isGrpcDeadlineError(err) || /time(d)? ?out|deadline/i.test(detail) ? 'timeout' : 'unreachable';
    log.warn({ check: name, err: detail }, `health check failed: ${name} ${error}`);
    return { status: 'down' as const, error };
  } finally {
    clearTimeout(timer);
  }
}

/** The service health (database, Temporal, knowledge mode): shared by GET /v1/health and the MCP tool check_health. */
export async function healthReport(
  deps: Pick<AppDeps, 'db' | 'temporal' | 'log' | 'config'>,
): Promise<z.input<typeof HealthResponse>> {
  const { db, temporal } = deps;
  const [database, temporalCheck, knowledge] = await Promise.all([
    timed('database', deps.log, () => db.oneFirst(sql.type(z.object({ ok: z.number() }))`SELECT 1::int AS ok`), 2000),
    timed(
      'temporal',
      deps.log,
      () =>
        temporal.connection.withDeadline(Date.now() + 2000, () =>
          temporal.connection.workflowService.getSystemInfo({}),
        ),
      2500,
    ),
    Promise.race([
      knowledgeMode(db, deps.config, deps.log),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 2500).unref()),
    ]).catch(() => undefined),
  ]);
  const ok = database.status === 'ok' && temporalCheck.status === 'ok';
  return {
    status: ok ? 'ok' : 'degraded',
    system: 'svc-runtime',
    version: CONTRACT_VERSION,
    checks: { database, temporal: temporalCheck },
    knowledge,
  };
}
