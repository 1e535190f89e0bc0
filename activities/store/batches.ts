import { sql, type CommonQueryMethods, type DatabasePool } from 'slonik';
import { cursorAfter } from './cursor';
import { z } from 'zod';
import { createFile } from './files';
import type { CounterDelta } from './rate-limits';

const epoch = (c: string) => sql.fragment`extract(epoch FROM ${sql.identifier([c])})::int8 AS ${sql.identifier([c])}`;
const TIMES = [
  'created_at',
  'in_progress_at',
  'finalizing_at',
  'completed_at',
  'failed_at',
  'cancelling_at',
  'cancelled_at',
  'expired_at',
  'expires_at',
];

export const BatchRow = z.object({
  id: z.string(),
  endpoint: z.string(),
  input_file_id: z.string(),
  completion_window: z.string(),
  status: z.string(),
  metadata: z.record(z.string(), z.string()).nullable(),
  errors: z
    .array(
      z.object({ code: z.string(), message: z.string(), param: z.string().nullable(), line: z.number().nullable() }),
    )
    .nullable(),
  request_total: z.number(),
  request_completed: z.number(),
  request_failed: z.number(),
  tokens_in: z.coerce.number(),
  tokens_out: z.coerce.number(),
  output_file_id: z.string().nullable(),
  error_file_id: z.string().nullable(),
  created_at: z.coerce.number(),
  in_progress_at: z.coerce.number().nullable(),
  finalizing_at: z.coerce.number().nullable(),
  completed_at: z.coerce.number().nullable(),
  failed_at: z.coerce.number().nullable(),
  cancelling_at: z.coerce.number().nullable(),
  cancelled_at: z.coerce.number().nullable(),
  expired_at: z.coerce.number().nullable(),
  expires_at: z.coerce.number(),
});
export type BatchRow = z.infer<typeof BatchRow>;

const COLS = sql.join(
  [
    sql.fragment`id, endpoint, input_file_id, completion_window, status, metadata, errors, request_total,
      request_completed, request_failed, tokens_in, tokens_out, output_file_id, error_file_id`,
    ...TIMES.map(epoch),
  ],
  sql.fragment`, `,
);

export interface BatchRequestIn {
  line: number;
  customId: string;
  job: object;
}

/**
 * Stores a batch and its planned requests (in_progress), or a batch that failed validation (its errors, no requests),
 * in one transaction.
 */
export async function insertBatch(
  db: DatabasePool,
  b: {
    id: string;
    tenantId: string;
    keyId: string;
    endpoint: string;
    inputFileId: string;
    completionWindow: string;
    /** Seconds the batch may run before it expires (its completion window). */
    windowSeconds: number;
    metadata?: Record<string, string>;
    outputExpiresSeconds?: number;
    /** The rate-limit windows the batch was admitted in. */
    windows?: object[];
    errors?: Array<{ code: string; message: string; param: string | null; line: number | null }>;
    requests: BatchRequestIn[];
    /** Batches of the tenant that may run at once: a batch past it is not stored (`{ running }` is answered). */
    maxRunning?: number;
  },
): Promise<BatchRow | { running: number }> {
  const failed = b.errors !== undefined;
  return db.transaction(async (tx) => {
    if (!failed && b.maxRunning !== undefined) {
      // The count and the insert under one per-tenant lock: two creates cannot both pass the cap.
      await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtextextended(${b.tenantId}, 1107))`);
      const running = await tx.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
        SELECT count(*) AS n FROM batches
        WHERE tenant_id = ${b.tenantId} AND status IN ('validating', 'in_progress', 'finalizing', 'cancelling')`);
      if (running >= b.maxRunning) return { running };
    }
    const row = await tx.one(sql.type(BatchRow)`
      INSERT INTO batches (id, tenant_id, key_id, endpoint, input_file_id, completion_window, status, metadata, errors,
        output_expires_seconds, windows, request_total, in_progress_at, failed_at, expires_at)
      VALUES (${b.id}, ${b.tenantId}, ${b.keyId}, ${b.endpoint}, ${b.inputFileId}, ${b.completionWindow},
        ${failed ? 'failed' : 'in_progress'}, ${b.metadata ? sql.json(b.metadata) : null},
        ${failed ? sql.json(b.errors as never) : null}, ${b.outputExpiresSeconds ?? null},
        ${sql.json((b.windows ?? []) as never)}, ${b.requests.length},
        ${failed ? null : sql.fragment`now()`}, ${failed ? sql.fragment`now()` : null}, now() + make_interval(secs => ${b.windowSeconds}))
      RETURNING ${COLS}`);
    for (let i = 0; i < b.requests.length; i += 500) {
      const chunk = b.requests.slice(i, i + 500);
      await tx.query(sql.unsafe`
        INSERT INTO batch_requests (batch_id, line, custom_id, job)
        SELECT ${b.id}, r.line, r.custom_id, r.job::json FROM ${sql.unnest(
          chunk.map((r) => [r.line, r.customId, JSON.stringify(r.job)]),
          ['int4', 'text', 'text'],
        )} AS r(line, custom_id, job)`);
    }
    return row;
  });
}

/** Deletes a batch and its requests (a batch whose workflow could not be started). */
export async function deleteBatch(db: DatabasePool, tenantId: string, id: string): Promise<void> {
  await db.query(sql.unsafe`DELETE FROM batches WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** A batch of the tenant; null when unknown or another tenant's. */
export async function getBatch(db: DatabasePool, tenantId: string, id: string): Promise<BatchRow | null> {
  return db.maybeOne(sql.type(BatchRow)`SELECT ${COLS} FROM batches WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** The tenant's batches, newest first, after the batch `after`; `limit + 1` read. Null when `after` is unknown. */
export async function listBatches(
  db: DatabasePool,
  o: { tenantId: string; limit: number; after?: string },
): Promise<readonly BatchRow[] | null> {
  const cursor = await cursorAfter(db, { table: 'batches', tenantId: o.tenantId, after: o.after, order: 'desc' });
  if (!cursor) return null;
  return db.any(sql.type(BatchRow)`
    SELECT ${COLS} FROM batches WHERE tenant_id = ${o.tenantId} ${cursor.where}
    ORDER BY ${cursor.orderBy} LIMIT ${o.limit + 1}`);
}

/** Marks a running batch cancelling; null when it does not run (the caller reads what it is). */
export async function markCancelling(db: DatabasePool, tenantId: string, id: string): Promise<BatchRow | null> {
  return db.maybeOne(sql.type(BatchRow)`
    UPDATE batches SET status = 'cancelling', cancelling_at = now()
    WHERE tenant_id = ${tenantId} AND id = ${id} AND status IN ('validating', 'in_progress')
    RETURNING ${COLS}`);
}

/** A batch's status and whether its window has ended (its worker's view: by id and tenant). */
export async function batchStatus(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<{ status: string; expired: boolean } | null> {
  return db.maybeOne(sql.type(z.object({ status: z.string(), expired: z.boolean() }))`
    SELECT status, expires_at <= now() AS expired FROM batches WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** The key that created a batch (its usage is reported under it) and the rate-limit windows it was admitted in. */
export async function batchAccount(
  db: DatabasePool,
  tenantId: string,
  id: string,
): Promise<{ key_id: string; windows: Array<Omit<CounterDelta, 'requests' | 'tokens'>> } | null> {
  return db.maybeOne(sql.type(
    z.object({
      key_id: z.string(),
      windows: z
        .array(z.any())
        .nullable()
        .transform((w) => w ?? []),
    }),
  )`
    SELECT key_id, windows FROM batches WHERE tenant_id = ${tenantId} AND id = ${id}`);
}

/** Up to `limit` requests of a batch still pending after line `afterLine`, in line order. */
export async function pendingRequests(
  db: DatabasePool,
  batchId: string,
  limit: number,
  afterLine = 0,
): Promise<ReadonlyArray<{ line: number; custom_id: string; job: Record<string, unknown> }>> {
  return db.any(sql.type(z.object({ line: z.number(), custom_id: z.string(), job: z.record(z.string(), z.unknown()) }))`
    SELECT line, custom_id, job FROM batch_requests WHERE batch_id = ${batchId} AND status = 'pending'
      AND line > ${afterLine}
    ORDER BY line LIMIT ${limit}`);
}

/**
 * Marks a pending request as having begun its server-run calls (an image about to be made), in one statement, before
 * the first of them: a later attempt then ends it failed rather than make the call again (see failCalledRequests).
 */
export async function markCalled(db: CommonQueryMethods, batchId: string, line: number): Promise<void> {
  await db.query(sql.unsafe`
    UPDATE batch_requests SET called_at = now()
    WHERE batch_id = ${batchId} AND line = ${line} AND status = 'pending' AND called_at IS NULL`);
}

/**
 * Ends failed, with `message`, the requests still pending that an earlier attempt marked called (its worker stopped
 * after a server-run call and before the outcome was recorded), and counts them in the batch, in one statement. Run at
 * the start of an attempt, before its pending requests are read: no request this attempt marks is among them.
 * @returns how many were ended
 */
export async function failCalledRequests(
  db: CommonQueryMethods,
  tenantId: string,
  batchId: string,
  message: string,
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`
    WITH up AS (
      UPDATE batch_requests SET status = 'failed', result = json_build_object(
        'id', 'batch_req_' || md5(batch_id || ':' || line), 'custom_id', custom_id, 'response', NULL,
        'error', json_build_object('code', 'server_error', 'message', ${message}::text))
      WHERE batch_id = ${batchId} AND status = 'pending' AND called_at IS NOT NULL RETURNING 1),
    counts AS (
      UPDATE batches SET request_failed = request_failed + (SELECT count(*) FROM up)
      WHERE tenant_id = ${tenantId} AND id = ${batchId} AND EXISTS (SELECT 1 FROM up))
    SELECT count(*) AS n FROM up`);
}

/**
 * Records requests' outcomes (each only while still pending, so an outcome is counted once) and adds them to the
 * batch's counts and token totals, in one statement.
 * @returns the lines recorded now (an outcome another attempt recorded first is not among them)
 */
export async function recordOutcomes(
  db: CommonQueryMethods,
  tenantId: string,
  batchId: string,
  outcomes: ReadonlyArray<{ line: number; ok: boolean; result: object; tokensIn: number; tokensOut: number }>,
): Promise<ReadonlySet<number>> {
  if (!outcomes.length) return new Set();
  const lines = await db.anyFirst(sql.type(z.object({ line: z.number() }))`
    WITH input AS (
      SELECT * FROM ${sql.unnest(
        outcomes.map((o) => [o.line, o.ok ? 'completed' : 'failed', JSON.stringify(o.result), o.tokensIn, o.tokensOut]),
        ['int4', 'text', 'text', 'int8', 'int8'],
      )} AS i(line, status, result, tokens_in, tokens_out)),
    up AS (
      UPDATE batch_requests r SET status = i.status, result = i.result::json FROM input i
      WHERE r.batch_id = ${batchId} AND r.line = i.line AND r.status = 'pending'
      RETURNING i.line, i.status, i.tokens_in, i.tokens_out),
    counts AS (
      UPDATE batches SET
        request_completed = request_completed + (SELECT count(*) FROM up WHERE status = 'completed'),
        request_failed = request_failed + (SELECT count(*) FROM up WHERE status = 'failed'),
        tokens_in = tokens_in + (SELECT coalesce(sum(tokens_in), 0) FROM up),
        tokens_out = tokens_out + (SELECT coalesce(sum(tokens_out), 0) FROM up)
      WHERE tenant_id = ${tenantId} AND id = ${batchId})
    SELECT line FROM up`);
  return new Set(lines);
}

/**
 * Ends a batch: its answered requests' lines written as its output file (completed ones) and error file (failed ones),
 * purpose batch_output, in input order; status `completed`, `cancelled` or `expired` (requests never answered are in
 * neither file). Idempotent: a batch already ended is left as it is.
 */
export async function finishBatch(
  db: DatabasePool,
  tenantId: string,
  id: string,
  outcome: 'completed' | 'cancelled' | 'expired',
  /** Requests still pending end failed with this message (a run that gave up), instead of being left out. */
  failPending?: string,
): Promise<void> {
  const ENDED = ['completed', 'cancelled', 'failed', 'expired'];
  // Finalizing (or cancelling) shows while the files are written.
  await db.query(sql.unsafe`
    UPDATE batches SET status = ${outcome === 'cancelled' ? 'cancelling' : 'finalizing'},
      finalizing_at = CASE WHEN ${outcome} <> 'cancelled' THEN now() ELSE finalizing_at END
    WHERE tenant_id = ${tenantId} AND id = ${id} AND NOT status = ANY(${sql.array(ENDED, 'text')})`);
  // The files and the end in one transaction, the batch row locked: an attempt that stops in the middle leaves no
  // file behind, and one that runs beside another (a timed-out attempt still going) finds the batch ended.
  await db.transaction(async (tx) => {
    const batch = await tx.maybeOne(sql.type(
      z.object({ status: z.string(), output_expires_seconds: z.number().nullable() }),
    )`
      SELECT status, output_expires_seconds FROM batches WHERE tenant_id = ${tenantId} AND id = ${id} FOR UPDATE`);
    if (!batch || ENDED.includes(batch.status)) return;
    if (failPending !== undefined)
      await tx.query(sql.unsafe`
        WITH up AS (
          UPDATE batch_requests SET status = 'failed', result = json_build_object(
            'id', 'batch_req_' || md5(batch_id || ':' || line), 'custom_id', custom_id, 'response', NULL,
            'error', json_build_object('code', 'batch_failed', 'message', ${failPending}::text))
          WHERE batch_id = ${id} AND status = 'pending' RETURNING 1)
        UPDATE batches SET request_failed = request_failed + (SELECT count(*) FROM up)
        WHERE tenant_id = ${tenantId} AND id = ${id}`);
    const rows = await tx.any(sql.type(z.object({ status: z.string(), result: z.unknown() }))`
      SELECT status, result FROM batch_requests WHERE batch_id = ${id} AND status <> 'pending' ORDER BY line`);
    const file = async (status: string, name: string) => {
      const lines = rows.filter((r) => r.status === status).map((r) => JSON.stringify(r.result));
      if (!lines.length) return null;
      const f = await createFile(tx, {
        tenantId,
        filename: `${id}_${name}.jsonl`,
        purpose: 'batch_output',
        contentType: 'application/jsonl',
        bytes: Buffer.from(lines.join('\n') + '\n'),
        expiresInSeconds: batch.output_expires_seconds ?? undefined,
        tenantLimit: Number.MAX_SAFE_INTEGER,
      });
      return 'id' in f ? f.id : null;
    };
    const output = await file('completed', 'output');
    const errors = await file('failed', 'errors');
    await tx.query(sql.unsafe`
      UPDATE batches SET status = ${outcome}, output_file_id = ${output}, error_file_id = ${errors},
        completed_at = CASE WHEN ${outcome} = 'completed' THEN now() END,
        cancelled_at = CASE WHEN ${outcome} = 'cancelled' THEN now() END,
        expired_at = CASE WHEN ${outcome} = 'expired' THEN now() END
      WHERE tenant_id = ${tenantId} AND id = ${id}`);
  });
}
