import type { ModelRouter } from '../../activities/providers/types';
import type { Db } from '../../activities/store/db';
import { randomToken } from '../../activities/store/ids';
import { sealWith, type Seal } from '../../activities/store/sealed';
import { AppError } from '../../schema/errors';
import { CompactedResponse, CompactRequest } from '../../schema/responses';
import { principalOf, type AppContext } from '../context';
import { defineRoute, type RouteSpec } from '../route';
import { abortOnDisconnect, checkedLane, modelsFor, unlessClientGone } from './chat-shared';
import { COMPACTION_HEADING, itemId, mcpCallMessages, responseUsage, type StoredItem } from './responses-items';
import { builtinLaneCall, builtinOutputText } from './responses-shell';

/**
 * A compaction item's `encrypted_content`: the summary sealed (`sealWith`: AES-256-GCM under the service's `compaction`
 * key) with the tenant's id as associated data, so it opens only for the tenant it was made for and any change to it
 * is seen. Stateless: it is valid as long as the client keeps it, on every replica.
 */
export const compactionSeal = (db: Db, tenantId: string): Promise<Seal> =>
  sealWith(db, 'compaction', `compaction:${tenantId}`, 'svccmp1.');

/**
 * The summaries of the compaction items among `items`, opened (no database read when there are none).
 * @throws AppError invalid_request naming `where(k)` for an item this service did not make for this tenant
 */
export async function compactionSummaries(
  db: Db,
  tenantId: string,
  items: readonly StoredItem[],
  where: (k: number) => string,
): Promise<Map<StoredItem, string>> {
  const out = new Map<StoredItem, string>();
  if (!items.some((i) => i.type === 'compaction')) return out;
  const seal = await compactionSeal(db, tenantId);
  items.forEach((item, k) => {
    if (item.type !== 'compaction') return;
    const summary = seal.open(item.encrypted_content);
    if (summary === null) {
      const path = where(k);
      throw new AppError(
        'invalid_request',
        `${path}: not a compaction item this service made for you (changed, cut short, from another account or another provider); compact the conversation again with POST /v1/responses/compact.`,
        { details: [{ path, message: 'not a compaction item of this service' }] },
      );
    }
    out.set(item, summary);
  });
  return out;
}

/** What the lane is asked to write: a summary another model can continue the work from. */
const COMPACTION_PROMPT = [
  'You are performing a context checkpoint compaction. The conversation below (between a user and an assistant,',
  'with the tools the assistant called and what they returned) is being replaced by your summary, and the work will',
  'continue from it with only the user messages and your summary to go on. Write a faithful, compact summary that',
  'keeps: the goal and the constraints the user set; decisions made and why; what was done (files, commands,',
  'results, names, numbers, identifiers, errors); what is still open, and the next steps. Do not invent anything,',
  'do not address the user, write no preamble: the summary only.',
].join(' ');

/** A conversation as a transcript the lane can summarise (tool calls and results inline, images noted). */
function transcript(items: readonly StoredItem[], summaries: ReadonlyMap<StoredItem, string>): string {
  return items
    .map((item) => {
      switch (item.type) {
        case 'message': {
          const text = item.content
            .map((p) =>
              p.type === 'input_image'
                ? '[image]'
                : p.type === 'refusal'
                  ? p.refusal
                  : p.type === 'input_file'
                    ? '[file]'
                    : p.text,
            )
            .join('\n');
          return `${item.role}: ${text}`;
        }
        case 'function_call':
          return `assistant called ${item.name}(${item.arguments}) [${item.call_id}]`;
        case 'custom_tool_call':
          return `assistant called ${item.name} with: ${item.input} [${item.call_id}]`;
        case 'function_call_output':
        case 'custom_tool_call_output':
          return `tool result [${item.call_id}]: ${item.output}`;
        case 'shell_call':
        case 'apply_patch_call':
        case 'local_shell_call':
        case 'computer_call': {
          const call = builtinLaneCall(item);
          return `assistant called ${call.function.name}(${call.function.arguments}) [${item.call_id}]`;
        }
        case 'shell_call_output':
        case 'apply_patch_call_output':
        case 'local_shell_call_output':
          return `tool result [${item.call_id}]: ${builtinOutputText(item)}`;
        case 'computer_call_output':
          return `tool result [${item.call_id}]: [screenshot]`;
        case 'compaction':
          return `${COMPACTION_HEADING}\n${summaries.get(item) ?? ''}`;
        case 'mcp_call': {
          const { answer } = mcpCallMessages(item);
          return `assistant called ${item.name}(${item.arguments}) on the MCP server ${item.server_label}\ntool result: ${String(answer.content)}`;
        }
        case 'image_generation_call':
          return `assistant made an image (${item.status}) from the prompt: ${item.revised_prompt ?? ''}`;
        default:
          // Tool lists and approval requests and answers: the calls made carry what matters.
          return '';
      }
    })
    .filter(Boolean)
    .join('\n\n');
}

/**
 * Compacts a conversation: its user messages kept as they are, everything else (assistant answers, tool calls and
 * results, earlier compactions) replaced by one compaction item holding the lane's summary, sealed.
 * @throws AppError the lane's failures
 */
export async function compactConversation(
  o: { db: Db; tenantId: string; models: ModelRouter; lane: string; signal: AbortSignal },
  items: readonly StoredItem[],
  summaries: ReadonlyMap<StoredItem, string>,
  instructions: string | undefined,
) {
  const result = await o.models.complete({
    lane: o.lane,
    messages: [
      { role: 'system', content: COMPACTION_PROMPT },
      {
        role: 'user',
        content: `${instructions !== undefined ? `The assistant's instructions were:\n${instructions}\n\n` : ''}The conversation:\n\n${transcript(items, summaries)}\n\nWrite the checkpoint summary now.`,
      },
    ],
    signal: o.signal,
  });
  if (!result.content.trim()) throw new AppError('upstream_error', 'The lane answered the compaction with no summary.');
  const seal = await compactionSeal(o.db, o.tenantId);
  const kept = items.filter((i) => i.type === 'message' && i.role === 'user');
  return {
    id: `resp_${randomToken(24)}`,
    object: 'response.compaction' as const,
    created_at: Math.floor(Date.now() / 1000),
    output: [
      ...kept,
      { type: 'compaction' as const, id: itemId('cmp'), encrypted_content: seal.seal(result.content.trim()) },
    ],
    usage: responseUsage(result.usage),
  };
}

/** POST /v1/responses/compact. */
export function compactionRoutes(
  conversation: (
    ctx: AppContext,
    body: CompactRequest,
  ) => Promise<{ items: StoredItem[]; summaries: Map<StoredItem, string> }>,
): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/responses/compact',
      access: { scope: 'runtime:chat' },
      summary:
        "Compacts a conversation (input and/or previous_response_id): its user messages kept, the rest replaced by one compaction item (the lane's summary, sealed); send the output back as input to continue.",
      tags: ['responses'],
      metered: true,
      conversation: true,
      body: CompactRequest,
      response: CompactedResponse,
      responses: { 404: 'Unknown model, or previous_response_id not found.', 502: 'The lane failed.' },
      example: { model: 'svc-oracle', previous_response_id: 'resp_...' },
      handler: async (ctx: AppContext, { body }) => {
        checkedLane(modelsFor(ctx), body.model);
        const { items, summaries } = await conversation(ctx, body);
        const abort = abortOnDisconnect(ctx);
        const o = {
          db: ctx.deps.db,
          tenantId: principalOf(ctx).tenantId,
          models: modelsFor(ctx),
          lane: body.model,
          signal: abort.signal,
        };
        return unlessClientGone(abort, () => compactConversation(o, items, summaries, body.instructions));
      },
    }),
  ];
}
