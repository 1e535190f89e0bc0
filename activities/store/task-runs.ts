import { createHash } from 'node:crypto';
import { sql, type CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { notFound } from '../../schema/errors';
import { snippetOf } from '../../schema/snippet';
import { workflowIds } from '../../schema/workflow-ids';
import {
  STEP_STATUSES,
  stepRefs,
  TASK_STATUSES,
  taskStream,
  type StepStatus,
  Task,
  type TaskPlanStep,
  type TaskRunClaim,
  type TaskStatus,
} from '../../schema/tasks';
import type { Db } from './db';
import type { NewDocument } from './documents';
import { appendEvent, batchNotify, ROW_NOTIFY } from './events';
import { GroupWriter } from './group-writer';
import { jobKeyInsert } from './job-keys';
import { newId } from './ids';
import { appendDone, getTask, SECRET_ARGS, STEP_COLS, stepColsOf, StepRow, TASK_COLS, TaskRow, taskRow } from './tasks';

/** A step run's outcome text shortened for events (the one snippet helper, re-exported for the task activities). */
export { snippetOf };

async function stepEvent(
  tx: CommonQueryMethods,
  tenantId: string,
  taskId: string,
  stepId: string,
  status: StepStatus,
  snippet: string,
) {
  await appendEvent(tx, {
    tenantId,
    stream: taskStream(taskId),
    type: 'step',
    data: { task_id: taskId, step_id: stepId, status, snippet },
  });
}

/** Thrown when an activity belongs to a run that no longer owns the task (cancelled, deleted, superseded). */
export class StaleRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleRunError';
  }
}

const PlanRow = z.object({
  id: z.string(),
  action: z.string(),
  depends_on: z.array(z.string()),
  status: z.enum(STEP_STATUSES),
  title: z.string().nullable(),
  args: z.record(z.string(), z.string()).nullable(),
});

const Claim = TaskRow.extend({
  previous: z.enum(TASK_STATUSES),
  attached: z.boolean(),
  floor: z.number().int(),
  plan: z.array(PlanRow).nullable(),
});

/** What a claim decided: the task row (as claimed), and for a new run its run key and plan. */
export interface TaskClaim {
  attached: boolean;
  /** Where the run's events start (SSE). */
  floor: number;
  previous: TaskStatus;
  task: TaskRow;
  /** A new run (not attached): the run key stamped on the task and its open steps, and the steps to schedule. */
  run?: TaskRunClaim;
}

/** The JSON of a task's steps as a run plans them (`status` given as an SQL expression over the row). */
const planJson = (tenantId: string, taskId: string, status: ReturnType<typeof sql.fragment>) => sql.fragment`
  coalesce((
    SELECT json_agg(json_build_object('id', id, 'action', action, 'depends_on', depends_on, 'status', ${status},
        'title', CASE WHEN action = 'save' AND ${status} = 'pending' THEN title END,
        'args', CASE WHEN action = 'save' AND ${status} = 'pending' THEN args END)
      ORDER BY order_num, created_at, id)
    FROM task_steps WHERE tenant_id = ${tenantId} AND task_id = ${taskId}), '[]')`;

/**
 * Marks the task running for a new run, unless it already runs (then the caller attaches).
 * Steps not yet completed go back to pending; completed steps keep their results. ONE statement:
 * the row lock (`FOR UPDATE`) makes concurrent claims of one task take turns, and the one that
 * waited sees the winner's `running` and attaches.
 *
 * A new run gets its run key here (a fresh random id, never the same for two claims): stamped on
 * the task and on every step it will run, it is what each step write, settle and finish of the run
 * checks (`run_id`), so a run of an older claim (cancelled, released, superseded) cannot write. The
 * key and the plan (the steps as this statement leaves them) go in the workflow input, so the run
 * needs no begin step of its own.
 *
 * The floor is the events sequence's current value, not the stream's newest id: a sequence is
 * read outside the statement's snapshot, so a claim that waited for the row lock behind a
 * finishing run still counts that run's `done` event (committed before the row changed) below
 * its floor. Every later event of this run draws a larger id.
 * @throws AppError not_found
 */
export async function claimTaskRun(
  db: Db,
  opts: {
    tenantId: string;
    taskId: string;
    /** The starting key, recorded for the run's workflow as `recordJobKey` does. */
    keyId?: string;
  },
): Promise<TaskClaim> {
  const runKey = newId('run');
  // The plan is read from the statement's snapshot (before the reset): every step not completed runs as pending.
  const planned = sql.fragment`CASE WHEN status = 'completed' THEN 'completed' ELSE 'pending' END`;
  const r = await db.maybeOne(sql.prepared('task_claim', Claim)`
    WITH t AS (
      SELECT ${TASK_COLS} FROM tasks WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId} FOR UPDATE),
    seq AS (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS floor FROM events_id_seq),
    claimed AS (
      UPDATE tasks SET status = 'running', run_id = ${runKey}, run_event_floor = (SELECT floor FROM seq), updated_at = now()
      WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND EXISTS (SELECT 1 FROM t WHERE t.status <> 'running')
      RETURNING ${TASK_COLS}),
    reset AS (
      UPDATE task_steps SET status = 'pending', error = NULL, result = NULL, run_id = ${runKey}, started_at = NULL, finished_at = NULL
      WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status <> 'completed'
        AND EXISTS (SELECT 1 FROM claimed))${
          opts.keyId === undefined
            ? sql.fragment``
            : sql.fragment`,
    -- The key that started the run (revoking it cancels the run): recordJobKey, in the same statement.
    job_key AS (${jobKeyInsert(
      { workflowId: workflowIds.task(opts.taskId), tenantId: opts.tenantId, keyId: opts.keyId, kind: 'task' },
      'claimed',
    )})`
        }
    SELECT c.*, t.status AS previous, false AS attached, c.run_event_floor AS floor,
      ${planJson(opts.tenantId, opts.taskId, planned)} AS plan
    FROM claimed c, t
    UNION ALL
    -- t is the row as locked: after waiting behind another claim, that claim's version.
    SELECT t.*, t.status AS previous, true AS attached, t.run_event_floor AS floor, NULL AS plan FROM t WHERE t.status = 'running'`);
  if (!r) throw notFound('Task');
  const { previous, attached, floor, plan, ...task } = r;
  return {
    attached,
    floor,
    previous,
    task,
    ...(attached || !plan ? {} : { run: { runKey, steps: plan.map(toPlanned) } }),
  };
}

/**
 * Undoes a claim whose workflow could not be started: the task goes back to its previous status and
 * the claim's run key comes off the task and its steps, so a workflow that started after all (a
 * start that timed out on our side) cannot write. Unless that run already moved a step: then it
 * exists and owns the task, and nothing is undone.
 */
export async function releaseTaskRun(
  db: Db,
  opts: { tenantId: string; taskId: string; previous: TaskStatus; runKey: string },
): Promise<void> {
  await db.query(sql.unsafe`
    WITH t AS (
      UPDATE tasks SET status = ${opts.previous}, run_id = NULL, updated_at = now()
      WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status = 'running' AND run_id = ${opts.runKey}
        AND NOT EXISTS (
          SELECT 1 FROM task_steps WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId}
            AND run_id = ${opts.runKey} AND status <> 'pending')
      RETURNING id)
    UPDATE task_steps SET run_id = NULL
    WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND run_id = ${opts.runKey} AND EXISTS (SELECT 1 FROM t)`);
}

const FinishedTask = z.object({ task: Task });

const BeganRun = z.object({ owned: z.boolean(), steps: z.array(PlanRow) });

/** Largest literal save (title and content, characters) the plan carries. */
export const LITERAL_SAVE_MAX = 200;

function literalSave(s: { action: string; title: string | null; args: Record<string, string> | null }) {
  if (s.action !== 'save' || !s.args) return undefined;
  const content = s.args.content;
  const title = s.args.title ?? s.title;
  if (typeof content !== 'string' || !content.trim() || typeof title !== 'string') return undefined;
  if (title.length + content.length > LITERAL_SAVE_MAX) return undefined;
  if (stepRefs({ title, content }).length) return undefined;
  return { title, content };
}

/** A plan row as the workflow gets it: a small literal save carries what it saves. */
function toPlanned({ title, args, ...s }: z.infer<typeof PlanRow>): TaskPlanStep {
  const lit = literalSave({ action: s.action, title, args });
  return lit ? { ...s, lit } : s;
}

/**
 * The workflow run takes ownership of a claimed task (idempotent for the same run): for runs whose
 * input carries no claim (started before the claim stamped a run key; the workflow's begin local activity).
 * @returns the steps to schedule (a small literal save with what it saves), or null when the task is gone or no longer claimed for this run
 */
export async function beginTaskRun(
  db: Db,
  opts: { tenantId: string; taskId: string; runId: string },
): Promise<TaskPlanStep[] | null> {
  // One statement (was three round trips). The run id on each open step is what the step path
  // checks instead of locking the task row. The SELECT sees the steps as before the statement,
  // which is right: only run_id changes here. Steps do not change while the task runs.
  const r = await db.one(sql.type(BeganRun)`
    WITH owned AS (
      UPDATE tasks SET run_id = ${opts.runId}, updated_at = now()
      WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status = 'running'
        AND (run_id IS NULL OR run_id = ${opts.runId})
      RETURNING id),
    claimed AS (
      UPDATE task_steps SET run_id = ${opts.runId}
      WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status <> 'completed'
        AND (run_id IS NULL OR run_id = ${opts.runId}) AND EXISTS (SELECT 1 FROM owned))
    SELECT EXISTS (SELECT 1 FROM owned) AS owned,
      ${planJson(opts.tenantId, opts.taskId, sql.fragment`status`)} AS steps`);
  if (!r.owned) return null;
  return r.steps.map(toPlanned);
}

/** A step row with its dependencies' results (id -> result). */
const StepWithDeps = StepRow.extend({ dep_results: z.record(z.string(), z.string()).nullable() });
type StepWithDeps = z.infer<typeof StepWithDeps>;

type StepRef = { tenantId: string; taskId: string; stepId: string; runId: string };

/**
 * The dependencies' results of row `s` (an expression): one primary-key lookup per dependency, so
 * it reads only those rows whatever plan a prepared statement keeps.
 */
const DEP_RESULTS_OF = sql.fragment`(
  SELECT jsonb_object_agg(d.id, coalesce(d.result, ''))
  FROM unnest(s.depends_on) AS dep(id) JOIN task_steps d ON d.task_id = s.task_id AND d.id = dep.id
  WHERE d.tenant_id = s.tenant_id)`;
/** The dependencies' results of the updated row `s` (a RETURNING column). */
const DEP_RESULTS = sql.fragment`${DEP_RESULTS_OF} AS dep_results`;

/**
 * What a `save` step stores, written by the statement that completes the step (see completeSaveStep):
 * its output row (one per run and step) and the document that indexes it, whose id (`doc_` + the
 * output id's suffix) is the step's result. The document has no id of its own here: it follows the
 * output row the statement wrote or found (a retry finds its earlier row). Only documents that fit
 * one statement (`fitsOneStatement`).
 */
export interface StepSave {
  output: { title: string | null; content: string };
  doc: Omit<NewDocument, 'id'>;
}

/**
 * One step transition with its event: pending -> running (start) or running -> completed (with the
 * result, or a save); `fused`: pending -> completed with both events (a literal save, `runSaveStep`).
 */
export interface StepWrite {
  ref: StepRef;
  to: 'running' | 'completed';
  result: string | null;
  save?: StepSave;
  fused?: boolean;
  /** A completion of the run's last step: it also ends the run (completed, `done` event), see `finishCtes`. */
  finish?: boolean;
}

const BatchRow = StepWithDeps.extend({
  ord: z.number().int(),
  save_result: z.string().nullable(),
  finished: z.boolean(),
});
type BatchResult = StepWithDeps & { save_result: string | null; finished: boolean };

/**
 * CTEs `sv` (the saves of a batch), `o` (their output rows), `d` (their documents) and `c` (the
 * documents' chunks). An output is written only while the run owns its running step (the same
 * condition as the completion in the statement); a retry finds its earlier output row and keeps its
 * document, chunks and all, exactly like `saveTaskOutputDocument`.
 */
function saveCtes(tenantId: string, taskId: string, writes: StepWrite[]) {
  const saves: unknown[][] = [];
  const chunks: unknown[][] = [];
  writes.forEach((w, ord) => {
    if (!w.save) return;
    const { output, doc } = w.save;
    saves.push([
      ord,
      newId('out'),
      output.title,
      output.content,
      doc.title.slice(0, 300),
      doc.mediaType,
      doc.sizeBytes,
      doc.text,
      createHash('sha256').update(doc.text).digest('hex'),
      JSON.stringify(doc.provenance ?? {}),
      doc.chunks.length,
      doc.spaceId ?? null,
      doc.sourceKind,
    ]);
    doc.chunks.forEach((text, n) => chunks.push([ord, newId('chk'), n, text]));
  });
  return sql.fragment`
    sv AS (
      SELECT * FROM ${sql.unnest(saves as never, ['int4', 'text', 'text', 'text', 'text', 'text', 'int8', 'text', 'text', 'text', 'int4', 'text', 'text'])}
        AS sv(ord, out_id, out_title, content, doc_title, media_type, size_bytes, doc_text, content_hash, provenance, chunk_count, space_id, source_kind)),
    o AS (
      INSERT INTO task_outputs (id, tenant_id, task_id, step_id, run_id, title, content)
      SELECT sv.out_id, ${tenantId}, ${taskId}, i.step_id, i.run_key, sv.out_title, sv.content
      FROM sv JOIN input i ON i.ord = sv.ord
      WHERE EXISTS (
        SELECT 1 FROM task_steps s WHERE s.tenant_id = ${tenantId} AND s.task_id = ${taskId} AND s.id = i.step_id
          AND s.run_id = i.run_key AND s.status = CASE WHEN i.fused THEN 'pending' ELSE 'running' END)
      ON CONFLICT (tenant_id, run_id, step_id) DO UPDATE SET content = task_outputs.content
      RETURNING id, step_id, 'doc_' || substr(id, 5) AS doc_id),
    d AS (
      INSERT INTO documents (id, tenant_id, space_id, source_kind, title, media_type, size_bytes, text, content_hash, provenance, chunk_count)
      SELECT o.doc_id, ${tenantId}, sv.space_id, sv.source_kind, sv.doc_title, sv.media_type, sv.size_bytes, sv.doc_text,
        sv.content_hash, sv.provenance::jsonb || jsonb_build_object('task_output_id', o.id), sv.chunk_count
      FROM o JOIN input i ON i.step_id = o.step_id JOIN sv ON sv.ord = i.ord
      ON CONFLICT DO NOTHING
      RETURNING id),
    c AS (
      INSERT INTO chunks (id, tenant_id, document_id, ord, title, text)
      SELECT x.id, ${tenantId}, d.id, x.n, sv.doc_title, x.text
      FROM ${sql.unnest(chunks as never, ['int4', 'text', 'int4', 'text'])} AS x(ord, id, n, text)
        JOIN sv ON sv.ord = x.ord JOIN input i ON i.ord = x.ord JOIN o ON o.step_id = i.step_id JOIN d ON d.id = o.doc_id),`;
}

/**
 * CTEs `fin`, `dn` and `allev` of a batch whose write `finish`es the run (its last step): when that
 * step's row was updated (`up`), the task is set completed on condition that the run still owns it
 * (as `finishTaskRun`), and its `done` event carries the task as the API returns it, the steps as
 * this statement leaves them (`up` overlays the rows it updated). The `done` event draws its id
 * after every step event of the batch (it reads `ev` to the end first), and one NOTIFY carries
 * them all in id order (`allev`), so a stream never sees `done` before the step it ends with.
 */
function finishCtes(tenantId: string, taskId: string, stream: string) {
  return sql.fragment`,
    fin AS (
      UPDATE tasks t SET status = 'completed', updated_at = now()
      WHERE t.id = ${taskId} AND t.tenant_id = ${tenantId} AND t.status = 'running'
        AND t.run_id = (SELECT i.run_key FROM input i JOIN up ON up.ord = i.ord WHERE i.finish LIMIT 1)
      RETURNING t.id, t.title, t.description, t.surface, t.session_id, t.priority, t.metadata, t.status, t.created_at, t.updated_at),
    dn AS (
      INSERT INTO events (tenant_id, stream, type, data)
      SELECT ${tenantId}, ${stream}, 'done',
        jsonb_build_object('done', true, 'task_id', t.id, 'status', t.status, 'task', ${taskJson(tenantId, 'up')})
      FROM fin t, (SELECT count(*) AS n FROM ev) AS after_step_events
      RETURNING id, type, data, created_at),
    allev AS (SELECT * FROM ev UNION ALL SELECT * FROM dn)`;
}

/**
 * The step transitions of one task stream, N at once, as ONE statement (one implicit
 * transaction, one commit): each row is updated only if this run still owns it (`run_id`) and it
 * is in the expected state; one `step` event per updated row, ids drawn in the order the writes
 * were queued, under the stream's lock (taken after every row is updated, as everywhere else, so
 * the order of locks is the same as in settleSteps and finishTaskRun); one NOTIFY for the batch,
 * carrying its events when they fit (`batchNotify`). A completion that carries a save also writes the
 * save's output and document (`saveCtes`), and its result is the document id.
 * @returns per write, its updated row with the dependencies' results (and a save's result), or null when the condition did not match
 */
async function writeStepBatch(db: CommonQueryMethods, writes: StepWrite[]): Promise<Array<BatchResult | null>> {
  const rows = await db.any(stepBatchQuery(writes));
  const byOrd = new Map(rows.map(({ ord, ...row }) => [ord, row]));
  return writes.map((_, i) => byOrd.get(i) ?? null);
}

/** The statement of `writeStepBatch` (exported for the test that checks what its plans read). */
export function stepBatchQuery(writes: StepWrite[]) {
  const { tenantId, taskId } = writes[0].ref;
  const stream = taskStream(taskId);
  const input = writes.map((w, i) => [
    i,
    w.ref.stepId,
    w.ref.runId,
    w.to,
    w.result,
    w.to === 'completed' ? snippetOf(w.result) : '',
    w.fused === true,
    w.finish === true,
  ]);
  const withSaves = writes.some((w) => w.save);
  const finishing = writes.some((w) => w.finish === true);
  // A named prepared statement (one name per text): parsed and planned once per connection, not per step.
  const name = `task_step_batch${withSaves ? '_save' : ''}${finishing ? '_finish' : ''}`;
  return sql.prepared(name, BatchRow)`
    WITH input AS (
      SELECT * FROM ${sql.unnest(input, ['int4', 'text', 'text', 'text', 'text', 'text', 'bool', 'bool'])}
        AS i(ord, step_id, run_key, to_status, new_result, snippet, fused, finish)),
    ${withSaves ? saveCtes(tenantId, taskId, writes) : sql.fragment``}
    up AS (
      UPDATE task_steps s SET
        status = i.to_status,
        attempts = s.attempts + CASE WHEN i.to_status = 'running' OR i.fused THEN 1 ELSE 0 END,
        started_at = CASE WHEN i.to_status = 'running' OR i.fused THEN coalesce(s.started_at, now()) ELSE s.started_at END,
        result = CASE WHEN i.to_status = 'completed' THEN ${withSaves ? sql.fragment`coalesce(o.doc_id, i.new_result)` : sql.fragment`i.new_result`} ELSE s.result END,
        finished_at = CASE WHEN i.to_status = 'completed' THEN now() ELSE s.finished_at END,
        error = NULL
      FROM input i ${withSaves ? sql.fragment`LEFT JOIN o ON o.step_id = i.step_id` : sql.fragment``}
      WHERE s.tenant_id = ${tenantId} AND s.task_id = ${taskId} AND s.id = i.step_id AND s.run_id = i.run_key
        AND s.status = CASE WHEN i.to_status = 'running' OR i.fused THEN 'pending' ELSE 'running' END
      RETURNING i.ord, i.fused, ${withSaves ? sql.fragment`coalesce(o.doc_id, i.snippet)` : sql.fragment`i.snippet`} AS snippet,
        ${withSaves ? sql.fragment`o.doc_id` : sql.fragment`NULL::text`} AS save_result, ${stepColsOf('s')},
        -- Only a start resolves its arguments from its dependencies' results; a completion needs none.
        CASE WHEN i.to_status = 'running' THEN ${DEP_RESULTS_OF} END AS dep_results),
    ev AS (
      INSERT INTO events (tenant_id, stream, type, data)
      SELECT ${tenantId}, ${stream}, 'step',
        jsonb_build_object('task_id', ${taskId}::text, 'step_id', u.id, 'status', x.status, 'snippet', x.snippet)
      FROM (SELECT ord, id, status, snippet, fused FROM up ORDER BY ord) u,
        -- A fused write's two events: running, then its outcome.
        LATERAL (SELECT 0 AS k, 'running'::text AS status, ''::text AS snippet WHERE u.fused
                 UNION ALL SELECT 1, u.status, u.snippet) AS x,
        -- Correlated with u, so it runs after the sort, i.e. after every row of up is updated.
        LATERAL (SELECT pg_advisory_xact_lock(hashtextextended(${stream}, 7426)) WHERE u.ord >= 0) AS stream_lock
      ORDER BY u.ord, x.k
      RETURNING id, type, data, created_at)${finishing ? finishCtes(tenantId, taskId, stream) : sql.fragment``}
    SELECT up.ord, up.save_result, ${STEP_COLS}, up.dep_results,
      ${finishing ? sql.fragment`EXISTS (SELECT 1 FROM dn)` : sql.fragment`false`} AS finished,
      ${batchNotify(finishing ? 'allev' : 'ev', stream, tenantId)} IS NULL AS notified
    FROM up`;
}

const stepWriters = new WeakMap<CommonQueryMethods, GroupWriter<StepWrite, BatchResult | null>>();

/**
 * The transition with its event, through the database's group writer for the task's stream:
 * concurrent steps of a run (a fan-out) share statements instead of queueing one by one on the
 * stream's lock, and a stream holds at most one pool connection for them at a time.
 */
function writeStep(db: CommonQueryMethods, write: StepWrite): Promise<BatchResult | null> {
  let writer = stepWriters.get(db);
  if (!writer) {
    writer = new GroupWriter((_key, writes) => writeStepBatch(db, writes), {
      max: STEP_BATCH_MAX,
      apart: (a, b) => a.ref.stepId === b.ref.stepId,
    });
    stepWriters.set(db, writer);
  }
  return writer.add(`${write.ref.tenantId}/${write.ref.taskId}`, write);
}

/** Most step transitions in one statement. */
const STEP_BATCH_MAX = 200;

function lostRun(opts: StepRef): StaleRunError {
  return new StaleRunError(`Run ${opts.runId} no longer owns step ${opts.stepId} of task ${opts.taskId}.`);
}

/**
 * Starts (or re-starts, on a retry) one step of a run. A step this run already completed
 * returns its stored result, so a retried activity never repeats finished work.
 * @throws StaleRunError when the run no longer owns the step
 */
export async function startStep(
  db: Db,
  opts: StepRef,
): Promise<{ done: true; result: string | null } | { done: false; step: StepRow; depResults: Record<string, string> }> {
  // The common case: pending -> running with its event (the transition clients see), batched.
  let row: StepWithDeps | null = await writeStep(db, { ref: opts, to: 'running', result: null });
  if (!row) {
    // A retry: a running step only counts the attempt; a completed one answers with its result.
    row = await db.maybeOne(sql.type(StepWithDeps)`
      UPDATE task_steps s SET attempts = attempts + 1, started_at = coalesce(started_at, now()), error = NULL
      WHERE task_id = ${opts.taskId} AND id = ${opts.stepId} AND tenant_id = ${opts.tenantId}
        AND run_id = ${opts.runId} AND status = 'running'
      RETURNING ${STEP_COLS}, ${DEP_RESULTS}`);
    if (!row) {
      const now = await db.maybeOne(sql.type(StepRow)`
        SELECT ${STEP_COLS} FROM task_steps WHERE task_id = ${opts.taskId} AND id = ${opts.stepId} AND tenant_id = ${opts.tenantId}`);
      if (now?.status === 'completed' && now.run_id === opts.runId) return { done: true, result: now.result };
      throw lostRun(opts);
    }
  }
  const { dep_results: deps, ...rest } = row;
  const { save_result: _save, ...step } = rest as typeof rest & { save_result?: string | null };
  return { done: false, step, depResults: deps ?? {} };
}

/** Stores a step's result and marks it completed (once per run). @throws StaleRunError */
export async function completeStep(db: Db, opts: StepRef & { result: string }): Promise<void> {
  const { result, ...ref } = opts;
  if (await writeStep(db, { ref, to: 'completed', result })) return;
  await completedBefore(db, ref);
}

/** A save step's outcome: its result (the document id), and whether its statement also ended the run (`finish`). */
export interface SaveDone {
  result: string;
  finished: boolean;
}

const saveDoneOf = (row: BatchResult): SaveDone => ({
  result: row.save_result ?? row.result ?? '',
  finished: row.finished,
});

/**
 * Completes a `save` step and writes what it saves (its output row and document) in the same
 * statement, batched with the stream's other step writes: one round trip for the action and the
 * completion. A stale run writes neither. With `finish` (the run's last step), the same statement
 * ends the run (see `finishCtes`).
 * @throws StaleRunError
 */
export async function completeSaveStep(
  db: Db,
  opts: StepRef & { save: StepSave; finish?: boolean },
): Promise<SaveDone> {
  const { save, finish, ...ref } = opts;
  const row = await writeStep(db, { ref, to: 'completed', result: null, save, finish });
  if (row) return saveDoneOf(row);
  return { result: (await completedBefore(db, ref)) ?? '', finished: false };
}

/**
 * Runs a literal `save` step (see `LiteralSave` in schema/tasks.ts) in ONE statement: pending -> completed with its
 * `running` and `completed` events, in that order, and what it saves (output row, document),
 * batched with the stream's other step writes; with `finish` (the run's last step) the statement
 * also ends the run. Only for an action without an external effect: a stale run writes nothing,
 * exactly as a start would have refused it.
 * @returns the step's result (the document id), or null when the step was not pending for this run
 * (a retry, or a stale run): the caller takes the ordinary path (`startStep`), which decides
 */
export async function runSaveStep(
  db: Db,
  opts: StepRef & { save: StepSave; finish?: boolean },
): Promise<SaveDone | null> {
  const { save, finish, ...ref } = opts;
  const row = await writeStep(db, { ref, to: 'completed', result: null, save, fused: true, finish });
  return row ? saveDoneOf(row) : null;
}

/**
 * After a completion matched nothing: a retry of an activity whose completion already committed is
 * fine (answers the stored result); anything else is a lost run.
 * @throws StaleRunError
 */
async function completedBefore(db: Db, ref: StepRef): Promise<string | null> {
  const now = await db.maybeOne(sql.type(StepRow)`
    SELECT ${STEP_COLS} FROM task_steps WHERE task_id = ${ref.taskId} AND id = ${ref.stepId} AND tenant_id = ${ref.tenantId}`);
  if (now?.status === 'completed' && now.run_id === ref.runId) return now.result;
  throw lostRun(ref);
}

/** Marks steps of a run failed/skipped/cancelled with a reason; steps already finished are left alone. */
export async function settleSteps(
  db: Db,
  opts: {
    tenantId: string;
    taskId: string;
    runId: string;
    stepIds: string[];
    status: 'failed' | 'skipped' | 'cancelled';
    reason: string;
  },
): Promise<void> {
  await db.transaction(async (tx) => {
    // Owned steps only (run id on the row): a stale run changes nothing, and no task-row lock is taken.
    const changed = await tx.anyFirst(sql.unsafe`
      UPDATE task_steps SET status = ${opts.status}, error = ${opts.reason}, finished_at = now()
      WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND id = ANY(${sql.array(opts.stepIds, 'text')})
        AND run_id = ${opts.runId} AND status IN ('pending', 'running')
      RETURNING id`);
    for (const id of opts.stepIds.filter((s) => changed.includes(s))) {
      await stepEvent(tx, opts.tenantId, opts.taskId, id, opts.status, snippetOf(opts.reason));
    }
  });
}

/** A timestamptz as the row parser renders it (`Date#toISOString`: UTC, milliseconds). */
const isoOf = (col: ReturnType<typeof sql.fragment>) =>
  sql.fragment`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The JSON of task row `t` with its steps, as `toTask` returns it (statements whose CTE `t` returns the task's columns). */
const taskJson = (tenantId: string, overlay?: string) => {
  // `overlay`: a CTE of step rows this statement updated (the rest of the statement still sees them as before).
  const col = (c: string) =>
    overlay
      ? sql.fragment`CASE WHEN u.id IS NULL THEN ${sql.identifier(['s', c])} ELSE ${sql.identifier(['u', c])} END`
      : sql.fragment`${sql.identifier(['s', c])}`;
  const join = overlay ? sql.fragment`LEFT JOIN ${sql.identifier([overlay])} u ON u.id = s.id` : sql.fragment``;
  return sql.fragment`jsonb_build_object(
  'id', t.id, 'title', t.title, 'description', t.description, 'surface', t.surface, 'session_id', t.session_id,
  'priority', t.priority, 'metadata', t.metadata, 'status', t.status,
  'created_at', ${isoOf(sql.fragment`t.created_at`)}, 'updated_at', ${isoOf(sql.fragment`t.updated_at`)},
  'steps', coalesce((
    SELECT jsonb_agg(jsonb_build_object(
        'id', s.id, 'task_id', s.task_id, 'title', s.title, 'action', s.action,
        'args', coalesce((SELECT jsonb_object_agg(a.key, CASE WHEN a.key = ANY(${sql.array([...SECRET_ARGS], 'text')}) THEN to_jsonb('[redacted]'::text) ELSE a.value END)
                          FROM jsonb_each(s.args) a), '{}'::jsonb),
        'depends_on', to_jsonb(s.depends_on), 'order_num', s.order_num, 'status', ${col('status')}, 'result', ${col('result')},
        'error', ${col('error')}, 'attempts', ${col('attempts')},
        'started_at', ${isoOf(col('started_at'))}, 'finished_at', ${isoOf(col('finished_at'))})
      ORDER BY s.order_num, s.created_at, s.id)
    FROM task_steps s ${join} WHERE s.tenant_id = ${tenantId} AND s.task_id = t.id), '[]'::jsonb))`;
};

/**
 * Ends a run: sets the task's final status and appends the `done` event with the task.
 * A run that no longer owns the task (cancelled, deleted) changes nothing.
 *
 * Completed and failed runs (every step settled, nothing left to change them) take ONE statement
 * instead of a seven-statement transaction: it sets the status, on condition that the run still
 * owns the task (the row lock makes a concurrent cancel or claim either win before it or see its
 * end), and appends `done` with the task built in SQL exactly as the API returns it (`toTask`:
 * the row as updated, its steps in order, a webhook secret redacted, timestamps as the row parser
 * renders them). Cancellation takes the locked transaction below (steps may still be moving).
 */
export async function finishTaskRun(
  db: Db,
  opts: { tenantId: string; taskId: string; runId: string; status: 'completed' | 'failed' | 'cancelled' },
): Promise<Task | null> {
  if (opts.status !== 'cancelled') {
    const stream = taskStream(opts.taskId);
    return db.maybeOneFirst(sql.prepared('task_finish', FinishedTask)`
      WITH t AS (
        UPDATE tasks SET status = ${opts.status}, updated_at = now()
        WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status = 'running' AND run_id = ${opts.runId}
        RETURNING id, title, description, surface, session_id, priority, metadata, status, created_at, updated_at),
      ev AS (
        INSERT INTO events (tenant_id, stream, type, data)
        SELECT ${opts.tenantId}, ${stream}, 'done',
          jsonb_build_object('done', true, 'task_id', t.id, 'status', t.status, 'task', ${taskJson(opts.tenantId)})
        FROM t, LATERAL (SELECT pg_advisory_xact_lock(hashtextextended(${stream}, 7426)) WHERE t.id IS NOT NULL) AS stream_lock
        RETURNING id, data, ${ROW_NOTIFY} IS NULL AS notified)
      SELECT data->'task' AS task FROM ev`);
  }
  return db.transaction(async (tx) => {
    const task = await taskRow(tx, opts.tenantId, opts.taskId, true);
    if (!task || task.status !== 'running' || task.run_id !== opts.runId) return null;
    if (opts.status === 'cancelled') {
      const ids = await tx.anyFirst(sql.unsafe`
        UPDATE task_steps SET status = 'cancelled', finished_at = now()
        WHERE task_id = ${opts.taskId} AND tenant_id = ${opts.tenantId} AND status IN ('pending', 'running')
        RETURNING id`);
      for (const id of ids) await stepEvent(tx, opts.tenantId, opts.taskId, String(id), 'cancelled', 'run cancelled');
    }
    await tx.query(sql.unsafe`
      UPDATE tasks SET status = ${opts.status}, updated_at = now() WHERE id = ${opts.taskId} AND tenant_id = ${opts.tenantId}`);
    const full = await getTask(tx, opts.tenantId, opts.taskId);
    await appendDone(tx, opts.tenantId, opts.taskId, opts.status, full);
    return full;
  });
}
