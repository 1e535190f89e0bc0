import { z } from 'zod';
import { sessionOr404, browserCommand, actionCommand } from '../../api/browser-client';
import { closeSession, createSession } from '../../api/browser-sessions';
import { queueEmail } from '../../api/routes/email';
import { claimAndStartRun } from '../../api/workflow-clients/tasks';
import {
  BrowserActionBody,
  BrowserCommandResponse,
  BrowserOpenBody,
  BrowserSession,
  BrowserSessionCreateBody,
  BrowserSnapshotFields,
} from '../../schema/browser';
import { EmailSendBody, EmailView } from '../../schema/email';
import { notFound } from '../../schema/errors';
import { Task, TaskCreateBody } from '../../schema/tasks';
import { derivedId } from '../store/ids';
import { createTask, getTask, taskRow } from '../store/tasks';
import { toolAppContext } from './context';
import { defineToolDef, type ToolContext, type ToolDef } from './types';

const SessionRef = z.object({
  session_id: z.string().regex(/^bse_[A-Za-z0-9_-]{1,60}$/, 'must be a browser session id'),
});
const browser = { scope: 'runtime:workspaces' as const, group: 'browser' };

async function command(ctx: ToolContext, sessionId: string, cmd: Parameters<typeof browserCommand>[2]) {
  const app = toolAppContext(ctx);
  return browserCommand(app, await sessionOr404(app, sessionId), cmd);
}

/** Tools with effects: tasks, browser sessions and email, through the API's own service functions. */
export const EFFECT_TOOLS: ToolDef[] = [
  defineToolDef({
    name: 'task_create',
    title: 'Create task',
    description: 'Create a task with optional inline steps (same as POST /v1/tasks).',
    input: TaskCreateBody,
    output: Task,
    readOnly: false,
    destructive: false,
    external: false,
    scope: 'key',
    group: 'tasks',
    run: async (args, ctx) => {
      const tenantId = ctx.principal.tenantId;
      if (!ctx.idempotencyKey) return createTask(ctx.deps.db, { tenantId, body: args });
      // Inside a plan step or an agent turn: the step key names the task, so a re-run after a crash
      // finds the task its first run created instead of creating a second one.
      const id = derivedId('tsk', JSON.stringify([tenantId, 'task_create', ctx.idempotencyKey]));
      return (await getTask(ctx.deps.db, tenantId, id)) ?? createTask(ctx.deps.db, { tenantId, body: args, id });
    },
  }),
  defineToolDef({
    name: 'task_execute',
    title: 'Execute task',
    description:
      'Start the step DAG of a task (workflow task-<id>); a running task is attached to, never run twice (same as POST /v1/tasks/{id}/execute).',
    input: z.object({ task_id: z.string().min(1).max(100) }),
    output: z.object({ task_id: z.string(), status: z.string(), attached: z.boolean() }),
    readOnly: false,
    destructive: false,
    external: true,
    scope: 'key',
    group: 'tasks',
    run: async ({ task_id }, ctx) => {
      const { db } = ctx.deps;
      const tenantId = ctx.principal.tenantId;
      const row = await taskRow(db, tenantId, task_id);
      if (!row) throw notFound('Task');
      const claim = await claimAndStartRun(toolAppContext(ctx), tenantId, row.id);
      const now = await getTask(db, tenantId, row.id);
      return { task_id: row.id, status: now?.status ?? 'running', attached: claim.attached };
    },
  }),
  defineToolDef({
    name: 'browser_session_create',
    title: 'Open browser session',
    description: 'Open a browser session (workflow browser-<id>) (same as POST /v1/browser/sessions).',
    input: BrowserSessionCreateBody,
    output: BrowserSession,
    readOnly: false,
    destructive: false,
    external: false,
    ...browser,
    run: (args, ctx) => createSession(toolAppContext(ctx), args),
  }),
  defineToolDef({
    name: 'browser_open',
    title: 'Browser: open URL',
    description: 'Navigate a session to an http(s) URL through the fetch guard (same as POST /v1/browser/open).',
    // The tool names its session (a model's call should say which session it drives).
    input: BrowserOpenBody.extend(SessionRef.shape),
    output: BrowserCommandResponse,
    readOnly: false,
    destructive: false,
    external: true,
    ...browser,
    run: (a, ctx) =>
      command(ctx, a.session_id, { op: 'open', url: a.url, waitUntil: a.wait_until, timeoutMs: a.timeout_ms }),
  }),
  defineToolDef({
    name: 'browser_snapshot',
    title: 'Browser: snapshot',
    description: 'Accessibility snapshot with element refs (same as GET /v1/browser/snapshot).',
    input: SessionRef.extend(BrowserSnapshotFields),
    output: BrowserCommandResponse,
    readOnly: true,
    destructive: false,
    external: false,
    ...browser,
    run: (a, ctx) =>
      command(ctx, a.session_id, { op: 'snapshot', ref: a.ref, depth: a.depth, maxChars: a.max_chars, diff: a.diff }),
  }),
  defineToolDef({
    name: 'browser_action',
    title: 'Browser: act',
    description: 'Click, fill, type, press, select... by ref or selector (same as POST /v1/browser/action).',
    input: BrowserActionBody,
    output: BrowserCommandResponse,
    readOnly: false,
    destructive: true,
    external: true,
    ...browser,
    run: (b, ctx) => command(ctx, b.session_id, actionCommand(b)),
  }),
  defineToolDef({
    name: 'browser_close',
    title: 'Close browser session',
    description: 'Close a browser session (same as DELETE /v1/browser/sessions/{id}).',
    input: SessionRef,
    output: BrowserSession,
    readOnly: false,
    destructive: true,
    external: false,
    ...browser,
    run: (a, ctx) => closeSession(toolAppContext(ctx), a.session_id),
  }),
  defineToolDef({
    name: 'email_send',
    title: 'Send email',
    description: 'Queue one email to one recipient (workflow email-<id>) (same as POST /v1/email/send).',
    input: EmailSendBody,
    output: EmailView,
    readOnly: false,
    destructive: false,
    external: true,
    scope: 'runtime:email:send',
    group: 'email',
    run: (args, ctx) => queueEmail(toolAppContext(ctx), args),
  }),
];
