import type { ModelRequest, ModelRouter } from '../../activities/providers/types';
import { appendExchange } from '../../activities/store/sessions';
import type { CommonQueryMethods } from 'slonik';
import type { ChatCompletionRequest } from '../../schema/chat';
import type { ChatHeaders } from '../../schema/headers';
import { DEFAULT_LANE } from '../../schema/model-config';
import { principalOf, type AppContext } from '../context';
import { openTokenTap, type TokenTap } from '../live/tokens';
import { loadMessageParts, tenantFiles, type PartPath } from './chat-parts';
import { planChat, type ChatPlan } from './chat-plan';
import { abortOnDisconnect, checkedLane, modelsFor, samplingOf } from './chat-shared';

/** A session's turn before its answer: whose, which session, the user's message, the lane. */
export interface SessionTurn {
  tenantId: string;
  surface: string;
  sessionKey: string;
  user: string;
  lane: string;
}

/** Stores a turn's exchange in its session; a turn of tool calls alone (no text) is not stored. */
export async function storeTurn(
  db: CommonQueryMethods,
  turn: SessionTurn | null,
  answer: string,
  provider: string,
  calls = 0,
): Promise<void> {
  if (!turn || (calls > 0 && !answer)) return;
  await appendExchange(db, { ...turn, assistant: answer, provider });
}

/** A persona model call made ready: what both OpenAI-compatible persona routes (chat completions, responses) run. */
export interface PersonaCall {
  lane: string;
  models: ModelRouter;
  req: ModelRequest;
  plan: ChatPlan;
  abort: AbortController;
  /** The client offered tools: the model's calls go back to the client. */
  toolsOffered: boolean;
  /** The meta block of the answer. */
  meta: (provider: string) => Record<string, unknown>;
  /** The session turn this call continues (X-Session-ID), without the answer; null when none is kept. */
  sessionTurn: SessionTurn | null;
  /** Stores the exchange in the session (X-Session-ID); a turn of tool calls alone is not stored. */
  store: (answer: string, provider: string, calls?: number) => Promise<void>;
  /** Token frames for a WebSocket subscriber of this session (or request id); undefined when none. */
  tap?: TokenTap;
}

/**
 * Everything the persona routes do before the lane is called: the lane checked, images and files loaded (and refused) before
 * anything else, the prompt planned (surface, profile, skills, session history), client tools and sampling passed on.
 * @throws AppError model_not_found, and what loading an image or planning refuses
 */
export async function preparePersonaCall(
  ctx: AppContext,
  body: ChatCompletionRequest,
  headers: ChatHeaders,
  partPath?: PartPath,
  /** Answered later by a worker (background response, batch line): no disconnect abort, no live token frames. */
  detached = false,
): Promise<PersonaCall> {
  const p = principalOf(ctx);
  const lane = body.model ?? DEFAULT_LANE;
  const models = modelsFor(ctx);
  checkedLane(models, lane);
  const messages = await loadMessageParts(
    body.messages,
    ctx.deps.config,
    partPath,
    tenantFiles(ctx.deps.db, p.tenantId),
  );
  const plan = await planChat(ctx, body, messages, p.tenantId, headers);
  const abort = detached ? new AbortController() : abortOnDisconnect(ctx);
  // Client tools go to the lane with how to choose them; the model's calls come back for the client to run.
  const tools = body.tools?.length ? body.tools : undefined;
  const sampling = samplingOf(body);
  const req: ModelRequest = { lane, messages: plan.messages, ...sampling, signal: abort.signal };
  if (tools) {
    req.tools = tools;
    if (body.tool_choice !== undefined) req.tool_choice = body.tool_choice;
    if (body.parallel_tool_calls !== undefined)
      req.extra = { ...sampling.extra, parallel_tool_calls: body.parallel_tool_calls };
  }
  const meta = (provider: string) => ({
    provider,
    sass_factor: plan.sass,
    surface: plan.surface ?? null,
    profile: plan.profile ?? null,
    skills: plan.skills,
    session_id: plan.sessionKey ?? null,
  });
  const sessionTurn =
    plan.sessionKey && plan.lastUser !== undefined
      ? { tenantId: p.tenantId, surface: plan.sessionSurface, sessionKey: plan.sessionKey, user: plan.lastUser, lane }
      : null;
  const store = (answer: string, provider: string, calls = 0) =>
    storeTurn(ctx.deps.db, sessionTurn, answer, provider, calls);
  const tap = detached ? undefined : openTokenTap(ctx.deps, p.tenantId, [plan.sessionKey, ctx.state.requestId]);
  return { lane, models, req, plan, abort, toolsOffered: tools !== undefined, meta, sessionTurn, store, tap };
}
