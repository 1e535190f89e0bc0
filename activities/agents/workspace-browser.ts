import { z } from 'zod';
import { browserCommand, actionCommand } from '../../api/browser-client';
import { closeSession, createSession } from '../../api/browser-sessions';
import {
  BrowserActionFields,
  BrowserSnapshotFields,
  BrowserCommandResponse,
  BrowserOpenBody,
  checkBrowserAction,
} from '../../schema/browser';
import { AppError } from '../../schema/errors';
import { BROWSER_LIVE, getBrowserSession, type BrowserSessionRow } from '../store/browser-sessions';
import { derivedId } from '../store/ids';
import { toolAppContext } from '../tools/context';
import { defineToolDef, type ToolContext, type ToolDef } from '../tools/types';

// A workspace run's own browser session. Its id is derived from the run (one session per run,
// found again by any worker and by a retried activity); it is opened on the first browser tool call
// and closed when the run ends. The run's browser tools take no session id: they can reach no
// other session of the tenant.

export const WORKSPACE_BROWSER_TOOL_NAMES = ['browser_open', 'browser_snapshot', 'browser_action'] as const;

const OPEN_WAIT_MS = 90_000;

/** The id of the run's session (`bse_…`, the shape of any session id). */
export function runBrowserSessionId(tenantId: string, runId: string): string {
  return derivedId('bse', JSON.stringify([tenantId, 'workspace-browser', runId]));
}

const live = (s: string) => (BROWSER_LIVE as readonly string[]).includes(s);

/** Waits while the session is opening (another tool call of the same turn may be opening it). */
async function settled(ctx: ToolContext, id: string): Promise<BrowserSessionRow | null> {
  const deadline = Date.now() + OPEN_WAIT_MS;
  for (;;) {
    const row = await getBrowserSession(ctx.deps.db, ctx.principal.tenantId, id);
    if (!row || row.status !== 'opening' || Date.now() > deadline) return row;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The run's session, opened on first use. An ended session (idle expiry, closed) is not reopened. */
async function ensureSession(ctx: ToolContext, runId: string): Promise<BrowserSessionRow> {
  const id = runBrowserSessionId(ctx.principal.tenantId, runId);
  let row = await settled(ctx, id);
  if (!row) {
    try {
      await createSession(toolAppContext(ctx), {}, { id });
    } catch (err) {
      // Two calls of one turn raced: the other one's insert won (unique id); wait for its session.
      if (!(await getBrowserSession(ctx.deps.db, ctx.principal.tenantId, id))) throw err;
    }
    row = await settled(ctx, id);
  }
  if (!row) throw new AppError('service_unavailable', 'The run’s browser session could not be opened.');
  if (row.status === 'opening') throw new AppError('conflict', 'The run’s browser session is still opening.');
  if (!live(row.status))
    throw new AppError(
      'conflict',
      `The run’s browser session has ended (${row.status}${row.error ? `: ${row.error}` : ''}); it is not reopened.`,
    );
  return row;
}

/** Closes the run's session if it was ever opened (run end, cancel); closing twice is a no-op. */
export async function closeRunBrowserSession(ctx: ToolContext, runId: string): Promise<void> {
  const id = runBrowserSessionId(ctx.principal.tenantId, runId);
  // A session still opening (a cancelled turn was opening it) is waited for, then closed.
  const row = await settled(ctx, id);
  if (!row || !live(row.status)) return;
  await closeSession(toolAppContext(ctx), id);
}

const { session_id: _sid, ...openFields } = BrowserOpenBody.shape;
void _sid;

/** browser_open / browser_snapshot / browser_action bound to the run's own session (same names and results as the registry's). */
export function workspaceBrowserTools(runId: string): ToolDef[] {
  const command = async (ctx: ToolContext, cmd: Parameters<typeof browserCommand>[2]) =>
    browserCommand(toolAppContext(ctx), await ensureSession(ctx, runId), cmd);
  const own = { scope: 'runtime:workspaces' as const, group: 'browser', output: BrowserCommandResponse };
  return [
    defineToolDef({
      name: 'browser_open',
      title: 'Browser: open URL',
      description: 'Navigate this run’s own browser (opened on first use) to an http(s) URL through the fetch guard.',
      input: z.strictObject(openFields),
      readOnly: false,
      destructive: false,
      external: true,
      ...own,
      run: (a, ctx) => command(ctx, { op: 'open', url: a.url, waitUntil: a.wait_until, timeoutMs: a.timeout_ms }),
    }),
    defineToolDef({
      name: 'browser_snapshot',
      title: 'Browser: snapshot',
      description: 'Accessibility snapshot of this run’s browser page, with element refs for browser_action.',
      input: z.strictObject(BrowserSnapshotFields),
      readOnly: true,
      destructive: false,
      external: false,
      ...own,
      run: (a, ctx) =>
        command(ctx, { op: 'snapshot', ref: a.ref, depth: a.depth, maxChars: a.max_chars, diff: a.diff }),
    }),
    defineToolDef({
      name: 'browser_action',
      title: 'Browser: act',
      description: 'Click, fill, type, press, select... by ref or selector in this run’s browser.',
      input: z.strictObject(BrowserActionFields).superRefine(checkBrowserAction),
      readOnly: false,
      destructive: true,
      external: true,
      ...own,
      run: (b, ctx) => command(ctx, actionCommand(b)),
    }),
  ];
}
