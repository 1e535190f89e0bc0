import { rm, mkdir } from 'node:fs/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import type { CommonQueryMethods } from 'slonik';
import { storableText } from '../../schema/storable';
import { streams, workflowIds } from '../../schema/workflow-ids';
import type { ActivityDeps } from '../deps';
import { heartbeating } from '../heartbeat';
import { FetchFailure, guardedRequest } from '../net/guarded-http';
import { appendEvent } from '../store/events';
import { findJobOutput, saveJobOutput } from '../store/job-outputs';
import { buildWorkerToolContext } from '../tools/context';
import { findTool, toolJsonSchemas, runTool } from '../tools/registry';
import type { ToolDef } from '../tools/types';
import { agentsSettings } from './config';
import { conversation } from './conversation';
import { ModelTurnOut, ToolCallOut, modelKey, parseOut, toolKey, usageOf } from './outputs';
import { agentOutputs, getAgentRun, holdOpenRun, updateAgentRun, type AgentRunRow } from './store';
import { closeRunBrowserSession, workspaceBrowserTools } from './workspace-browser';
import { workspaceTools } from './workspace-tools';

export interface AgentRef {
  tenantId: string;
  runId: string;
}

/** Activities of the agent workflow (`agent-<id>`): one per model turn, one per tool call; each is idempotent by step key. */
export function createAgentActivities(deps: ActivityDeps) {
  const { db } = deps;
  const event = (tx: CommonQueryMethods, ref: AgentRef, type: string, data: unknown) =>
    appendEvent(tx, { tenantId: ref.tenantId, stream: streams.agent(ref.runId), type, data });
  const run = async (ref: AgentRef) => {
    const row = await getAgentRun(db, ref.tenantId, ref.runId);
    if (!row) throw ApplicationFailure.nonRetryable(`Agent run ${ref.runId} not found.`, 'NotFound');
    return row;
  };
  const toolsOf = (row: AgentRunRow): ToolDef[] => {
    const ws = row.workspace
      ? [
          ...workspaceTools({
            dir: row.workspace.dir,
            shell: row.workspace.shell ? agentsSettings(deps.config).workspaces.shell : undefined,
            signal: () => Context.current().cancellationSignal,
          }),
          ...workspaceBrowserTools(row.id),
        ]
      : [];
    return row.tier.tools.flatMap((name) => {
      const t = ws.find((w) => w.name === name) ?? findTool(name, row.principal.scopes);
      // A workspace run reaches no browser session but its own (never the registry's session-id tools).
      return t && !(row.workspace && t.group === 'browser' && !ws.includes(t)) ? [t] : [];
    });
  };

  return {
    async agentStart(ref: AgentRef): Promise<void> {
      const row = await run(ref);
      if (row.workspace) await mkdir(row.workspace.dir, { recursive: true, mode: 0o700 });
      if (row.status !== 'queued') return;
      // Each progress write and its event commit together: a retry that finds the write finds the event too.
      await db.transaction(async (tx) => {
        if (await updateAgentRun(tx, ref.tenantId, ref.runId, { status: 'running' }))
          await event(tx, ref, 'started', { tier: row.tier.name, lane: row.tier.lane, tools: row.tier.tools });
      });
    },

    /** One model turn: the conversation is rebuilt from the stored outputs; the answer is stored under `s<n>-model`. */
    async agentModelTurn(
      o: AgentRef & { step: number; final: boolean; maxTokens: number },
    ): Promise<{ callIds: string[]; done: boolean; cut: boolean; tokens: number }> {
      const key = modelKey(o.step);
      const summarise = (content: string, usage: unknown) => {
        const m = parseOut(ModelTurnOut, content);
        const u = usage as { prompt_tokens?: number; completion_tokens?: number } | null;
        const calls = o.final ? [] : (m?.tool_calls ?? []);
        return {
          callIds: calls.map((c) => c.id),
          done: calls.length === 0,
          // The last turn asked for tools anyway: the step bound cut the run short.
          cut: o.final && (m?.tool_calls.length ?? 0) > 0,
          tokens: (u?.prompt_tokens ?? 0) + (u?.completion_tokens ?? 0),
        };
      };
      // Independent reads at once: each round trip is on the turn's critical path.
      const [row, outputs] = await Promise.all([run(o), agentOutputs(db, o.tenantId, o.runId)]);
      const prior = outputs.find((x) => x.step_key === key);
      if (prior) return summarise(prior.content, prior.usage);
      const defs = toolsOf(row);
      const messages = conversation(row, outputs);
      const started = Date.now();
      const res = await heartbeating(() =>
        deps.models!.complete({
          lane: row.tier.lane,
          messages,
          max_tokens: Math.max(256, Math.min(4096, o.maxTokens)),
          ...(o.final || !defs.length
            ? {}
            : {
                tools: defs.map((t) => ({
                  type: 'function',
                  function: {
                    name: t.name,
                    description: t.description.slice(0, 1000),
                    parameters: toolJsonSchemas(t).input,
                  },
                })),
              }),
          signal: Context.current().cancellationSignal,
          timeoutMs: 120_000,
        }),
      );
      // Only calls to the run's own tools are kept; an invented name becomes a failed tool step.
      const out: ModelTurnOut = {
        content: res.content || null,
        tool_calls: (res.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        })),
        finish_reason: res.finish_reason,
      };
      return db.transaction(async (tx) => {
        // A run that ended meanwhile (cancelled while the model answered) keeps no step after its end.
        if (!(await holdOpenRun(tx, o.tenantId, o.runId))) return { callIds: [], done: true, cut: false, tokens: 0 };
        const saved = await saveJobOutput(tx, {
          tenantId: o.tenantId,
          jobId: o.runId,
          stepKey: key,
          lane: row.tier.lane,
          provider: res.provider,
          content: JSON.stringify(out),
          usage: res.usage,
          durationMs: Date.now() - started,
        });
        const r = summarise(saved.content, res.usage);
        if (saved.fresh)
          await event(tx, o, 'turn', { step: o.step, tool_calls: out.tool_calls.map((c) => c.name), done: r.done });
        return r;
      });
    },

    /** One tool call of a turn, stored under `s<n>-tool-<call id>`; a failing tool is a step with ok false, not a failed run. */
    async agentToolCall(o: AgentRef & { step: number; callId: string }): Promise<{ ok: boolean }> {
      const key = toolKey(o.step, o.callId);
      const [prior, row, turn] = await Promise.all([
        findJobOutput(db, o.tenantId, o.runId, key),
        run(o),
        findJobOutput(db, o.tenantId, o.runId, modelKey(o.step)),
      ]);
      if (prior) return { ok: parseOut(ToolCallOut, prior.content)?.ok ?? false };
      const call = turn && parseOut(ModelTurnOut, turn.content)?.tool_calls.find((c) => c.id === o.callId);
      if (!call) throw ApplicationFailure.nonRetryable(`No tool call ${o.callId} in step ${o.step}.`, 'NotFound');
      const started = Date.now();
      const tool = toolsOf(row).find((t) => t.name === call.name);
      let out: ToolCallOut;
      if (!tool)
        out = { name: call.name, call_id: call.id, ok: false, error: `Unknown or not allowed tool: ${call.name}` };
      else {
        let args: unknown;
        try {
          args = call.arguments ? JSON.parse(call.arguments) : {};
        } catch {
          args = undefined;
        }
        const r =
          args === undefined
            ? ({ ok: false, error: 'Invalid arguments: not JSON' } as const)
            : await heartbeating(() =>
                runTool(
                  tool,
                  args,
                  // The step key makes a tool's write idempotent when a crash re-runs this activity.
                  buildWorkerToolContext(deps, row.principal, {
                    idempotencyKey: `${workflowIds.agent(o.runId)}:${key}`,
                  }),
                ),
              );
        out = r.ok
          ? { name: call.name, call_id: call.id, ok: true, result: r.result }
          : { name: call.name, call_id: call.id, ok: false, error: r.error };
      }
      return db.transaction(async (tx) => {
        if (!(await holdOpenRun(tx, o.tenantId, o.runId))) return { ok: false };
        const saved = await saveJobOutput(tx, {
          tenantId: o.tenantId,
          jobId: o.runId,
          stepKey: key,
          lane: 'tool',
          provider: null,
          content: JSON.stringify(out),
          usage: null,
          durationMs: Date.now() - started,
        });
        if (!saved.fresh) return { ok: parseOut(ToolCallOut, saved.content)?.ok ?? false };
        await event(tx, o, 'tool', {
          step: o.step,
          name: call.name,
          ok: out.ok,
          ...(out.error ? { error: out.error } : {}),
        });
        return { ok: out.ok };
      });
    },

    /** Hands a code task to the configured delegate (through the fetch guard); the run id is the idempotency key. */
    async agentDelegate(ref: AgentRef): Promise<void> {
      const row = await run(ref);
      if (row.is_delegated) return;
      const d = agentsSettings(deps.config).delegate;
      if (!d) throw ApplicationFailure.nonRetryable('No delegate is configured.', 'DelegateFailed');
      let res;
      try {
        res = await heartbeating(() =>
          guardedRequest(d.url, {
            allowPrivate: deps.config.allowPrivateFetch,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'idempotency-key': row.id,
              ...(d.token ? { authorization: `Bearer ${d.token}` } : {}),
            },
            body: JSON.stringify({ run_id: row.id, task: row.query, context: row.context ?? null }),
            maxBytes: 256 * 1024,
            overflow: 'fail',
            timeoutMs: d.timeoutMs,
            signal: Context.current().cancellationSignal,
          }),
        );
      } catch (err) {
        if (err instanceof FetchFailure && (err.kind === 'refused' || err.kind === 'invalid'))
          throw ApplicationFailure.nonRetryable(`The delegate URL is refused: ${err.message}`, 'DelegateFailed');
        throw new Error(`The delegate could not be reached: ${(err as Error).message}`);
      }
      if (res.status >= 500) throw new Error(`The delegate answered HTTP ${res.status}.`);
      const body = z
        .object({
          pr_link: z.url().nullable().optional(),
          // Another system's text, stored as the run's answer: NUL and lone surrogates become U+FFFD.
          summary: z.string().max(20_000).transform(storableText).optional(),
        })
        .safeParse(safeJson(res.body.toString('utf8')));
      if (res.status >= 400 || !body.success)
        throw ApplicationFailure.nonRetryable(
          `The delegate refused the task (HTTP ${res.status}${body.success ? '' : ', unreadable answer'}).`,
          'DelegateFailed',
        );
      await db.transaction(async (tx) => {
        const changed = await updateAgentRun(tx, ref.tenantId, ref.runId, {
          delegated: { prLink: body.data.pr_link ?? null },
          answer: body.data.summary ?? null,
        });
        if (changed) await event(tx, ref, 'delegated', { pr_link: body.data.pr_link ?? null });
      });
    },

    /** Closes the run: answer from the last model turn, usage from the outputs, the workspace folder removed or kept. */
    async agentFinish(
      o: AgentRef & {
        status: 'completed' | 'failed' | 'cancelled';
        stopReason?: 'answered' | 'max_steps' | 'max_tokens' | 'delegated';
        error?: string;
      },
    ): Promise<void> {
      const row = await run(o);
      // The run's own browser session is closed before the run reads as ended.
      if (row.workspace) await closeRunBrowserSession(buildWorkerToolContext(deps, row.principal), row.id);
      const outputs = await agentOutputs(db, o.tenantId, o.runId);
      const last = [...outputs].reverse().find((x) => x.step_key.endsWith('-model'));
      const answer = row.is_delegated ? row.answer : (parseOut(ModelTurnOut, last?.content ?? '')?.content ?? null);
      if (row.workspace) {
        const keep =
          row.workspace.keep || (o.status === 'failed' && agentsSettings(deps.config).workspaces.keep === 'on_failure');
        // Before the run reads ended (whoever sees it ended finds the folder gone); a removal that fails is retried
        // with the activity.
        if (!keep) await rm(row.workspace.dir, { recursive: true, force: true });
      }
      // The status and the stream's `done` in one transaction: a retry after a crash between them cannot find the run
      // ended and skip `done` (its event streams would never close); a run ended first (a cancel) gets no second one.
      await db.transaction(async (tx) => {
        const ended = await updateAgentRun(tx, o.tenantId, o.runId, {
          status: o.status,
          stopReason: o.stopReason,
          answer,
          usage: usageOf(outputs),
          error: o.error,
        });
        if (ended)
          await event(tx, o, 'done', { status: o.status, stop_reason: o.stopReason ?? null, error: o.error ?? null });
      });
    },
  };
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}
